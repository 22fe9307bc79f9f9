#include "plot_panel.h"

#include <qcustomplot.h>
#include <QVBoxLayout>

#include "plot_style.h"

namespace liftlab {

PlotPanel::PlotPanel(QWidget* parent, QSize minimum)
    : QWidget(parent), plot_(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    setMinimumSize(minimum);
    applyLabStyle(plot_);
}

void PlotPanel::setTitle(const QString& title) {
    setPlotTitle(plot_, title_, title);
}

bool PlotPanel::exportTo(const QString& path, int width, int height) {
    return exportPlot(plot_, path, width, height, exportTitle());
}

void PlotPanel::setEmptyNote(const QString& note) {
    if (note.isEmpty()) {
        if (emptyNote_) plot_->removeItem(emptyNote_);
        emptyNote_ = nullptr;
        return;
    }
    if (!emptyNote_) {
        emptyNote_ = new QCPItemText(plot_);
        emptyNote_->position->setType(QCPItemPosition::ptAxisRectRatio);
        emptyNote_->position->setAxisRect(plot_->axisRect());
        emptyNote_->position->setCoords(0.5, 0.5);
        emptyNote_->setColor(QColor(130, 130, 130));
        emptyNote_->setClipToAxisRect(false);
        connect(plot_, &QCustomPlot::beforeReplot, this, &PlotPanel::updateEmptyNote);
    }
    emptyNote_->setText(note);
    updateEmptyNote();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void PlotPanel::updateEmptyNote() {
    if (!emptyNote_) return;
    bool empty = true;
    for (int i = 0; i < plot_->plottableCount() && empty; ++i)
        if (const auto* data = plot_->plottable(i)->interface1D()) empty = data->dataCount() == 0;
    emptyNote_->setVisible(empty);
}

void PlotPanel::setAxisLogScale(QCPAxis* axis, bool log) {
    axis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (log)
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    else
        axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
}

}  // namespace liftlab
