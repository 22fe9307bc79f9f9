#include "scatter_panel.h"

#include <qcustomplot.h>
#include <QVBoxLayout>
#include <cmath>

#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

ScatterPanel::ScatterPanel(QWidget* parent) : PlotPanel(parent) {
    plot_->setInteractions(QCP::iRangeZoom);
    plot_->setSelectionRectMode(QCP::srmZoom);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { rescale(); });
}

void ScatterPanel::setAxes(const QString& xLabel, const QString& yLabel, bool logX, bool logY) {
    logX_ = logX;
    logY_ = logY;
    plot_->xAxis->setLabel(xLabel);
    plot_->yAxis->setLabel(yLabel);
    setAxisLogScale(plot_->xAxis, logX);
    setAxisLogScale(plot_->yAxis, logY);
}

void ScatterPanel::addPoints(const QString& method, const QVector<double>& x,
                             const QVector<double>& y) {
    QCPGraph* g = nullptr;
    for (int i = 0; i < plot_->graphCount(); ++i)
        if (plot_->graph(i)->name() == method) g = plot_->graph(i);
    if (!g) {
        g = plot_->addGraph();
        g->setName(method);
        g->setLineStyle(QCPGraph::lsNone);
        const QColor c = methodColor(method);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 6));
        g->setPen(QPen(c));
    }
    for (int i = 0; i < std::min(x.size(), y.size()); ++i) {
        const bool ok = std::isfinite(x[i]) && std::isfinite(y[i]) && (!logX_ || x[i] > 0) &&
                        (!logY_ || y[i] > 0);
        if (ok) g->addData(x[i], y[i]);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void ScatterPanel::setReference(const QString& name, const QVector<double>& x,
                                const QVector<double>& y) {
    QCPGraph* g = plot_->addGraph();
    g->setName(name);
    g->setPen(QPen(QColor(110, 110, 110), 1.5, Qt::DashLine));
    g->setData(x, y);
}

void ScatterPanel::clear() {
    plot_->clearGraphs();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

int ScatterPanel::seriesCount() const {
    return plot_->graphCount();
}

int ScatterPanel::pointCount(const QString& method) const {
    for (int i = 0; i < plot_->graphCount(); ++i)
        if (plot_->graph(i)->name() == method) return plot_->graph(i)->dataCount();
    return 0;
}

void ScatterPanel::rescale() {
    plot_->rescaleAxes();
    for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
        QCPRange r = axis->range();
        if (axis->scaleType() == QCPAxis::stLogarithmic)
            axis->setRange(r.lower / 1.3, r.upper * 1.3);
        else
            axis->setRange(r.lower - 0.05 * r.size(), r.upper + 0.05 * r.size());
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace liftlab
