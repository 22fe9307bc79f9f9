#include "plot_panel.h"

#include <qcustomplot.h>
#include <QResizeEvent>
#include <QVBoxLayout>

#include "plot_style.h"

namespace liftlab {

namespace {

// The panels' QCustomPlot. A queued replot (rpQueuedReplot: how every live update asks for one)
// is kept, not drawn, while the plot is hidden in a window on screen (a tab not shown) and drawn
// when the plot is shown: the window trains with one tab in view, and each hidden panel's
// replot costs the GUI thread a few milliseconds at every log point for nobody to see. Direct
// replots (exports, rpImmediateRefresh) and plots outside a shown window draw as before.
class PanelPlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit PanelPlot(QWidget* parent) : QCustomPlot(parent) {
        // Any replot that draws (a direct one, the one a first show's resize makes) is the
        // kept one.
        connect(this, &QCustomPlot::beforeReplot, this, [this] { deferred_ = false; });
    }

public Q_SLOTS:
    // The slot QCustomPlot's queued replot calls (by name: this one hides the base's).
    void replot(QCustomPlot::RefreshPriority priority = QCustomPlot::rpRefreshHint) {
        if (priority != rpQueuedReplot && !isVisible() && window()->isVisible()) {
            deferred_ = true;  // mReplotQueued stays set: later requests queue nothing more
            return;
        }
        QCustomPlot::replot(priority);
    }

protected:
    void showEvent(QShowEvent* event) override {
        QCustomPlot::showEvent(event);
        if (deferred_) {
            deferred_ = false;
            mReplotQueued = false;
            QCustomPlot::replot(rpQueuedReplot);
        }
    }

private:
    bool deferred_ = false;
};

}  // namespace

PlotPanel::PlotPanel(QWidget* parent, QSize minimum) : QWidget(parent), plot_(new PanelPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    setMinimumSize(minimum);
    applyLabStyle(plot_);
    connect(plot_, &QCustomPlot::beforeReplot, this, &PlotPanel::hideEmptyLegend);
}

void PlotPanel::hideEmptyLegend() {
    // An empty legend draws as a small empty box in its corner: hidden while it lists nothing,
    // shown again (if it was shown) once a series is named in it.
    QCPLegend* legend = plot_->legend;
    if (!legend) return;
    const bool empty = legend->itemCount() == 0;
    if (empty && legend->visible()) {
        legend->setVisible(false);
        legendHiddenWhileEmpty_ = true;
    } else if (!empty && legendHiddenWhileEmpty_) {
        legend->setVisible(true);
        legendHiddenWhileEmpty_ = false;
    }
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
        // After the layout: the note wraps to the axis rect as this replot lays it out.
        connect(plot_, &QCustomPlot::afterLayout, this, &PlotPanel::updateEmptyNote);
    }
    noteText_ = note;
    emptyNote_->setText(note);
    updateEmptyNote();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool PlotPanel::emptyNoteShown() const {
    return emptyNote_ && emptyNote_->visible() && !noteText_.isEmpty();
}

namespace {
// `text` broken at spaces into lines no wider than `width` pixels in `metrics`; its own line
// breaks are kept.
QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width) {
    if (text.contains(QLatin1Char('\n'))) {
        QStringList lines;
        for (const QString& paragraph : text.split(QLatin1Char('\n')))
            lines << wrapToWidth(paragraph, metrics, width);
        return lines.join(QLatin1Char('\n'));
    }
    QString wrapped, line;
    for (const QString& word : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QString candidate = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
        if (!line.isEmpty() && width > 0 && metrics.horizontalAdvance(candidate) > width) {
            wrapped += line + QLatin1Char('\n');
            line = word;
        } else {
            line = candidate;
        }
    }
    return wrapped + line;
}
}  // namespace

void PlotPanel::setCaption(const QString& caption) {
    captionText_ = caption;
    QCPLayoutGrid* grid = plot_->plotLayout();
    if (caption.isEmpty()) {
        if (caption_) {
            grid->remove(caption_);
            grid->simplify();
            caption_ = nullptr;
        }
        plot_->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    if (!caption_) {
        QFont f = plot_->font();
        f.setPointSizeF(f.pointSizeF() * 0.92);
        caption_ = new QCPTextElement(plot_, caption, f);
        caption_->setTextColor(QColor(95, 95, 95));
        caption_->setMargins(QMargins(8, 2, 8, 6));
        // Its width never widens the column (the text wraps to the cell instead).
        caption_->setMinimumSize(1, 0);
        const int row = grid->rowCount();
        grid->insertRow(row);
        grid->addElement(row, 0, caption_);
        grid->setRowStretchFactor(row, 0.001);
        connect(plot_, &QCustomPlot::afterLayout, this, &PlotPanel::wrapCaption,
                Qt::UniqueConnection);
    }
    caption_->setText(caption);
    wrapCaption();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

// Wrapped to the width of its cell as the last layout gave it (the panel's width before any).
void PlotPanel::wrapCaption() {
    if (!caption_) return;
    const int cell = caption_->outerRect().width();
    const int width = (cell > 0 ? cell : plot_->width()) - 20;
    const QString text = wrapToWidth(captionText_, QFontMetrics(caption_->font()), width);
    if (text == caption_->text()) return;
    caption_->setText(text);
    plot_->replot(QCustomPlot::rpQueuedReplot);  // its height changed: lay out again
}

void PlotPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
}

void PlotPanel::updateEmptyNote() {
    if (!emptyNote_) return;
    bool empty = true;
    for (int i = 0; i < plot_->plottableCount() && empty; ++i)
        if (const auto* data = plot_->plottable(i)->interface1D()) empty = data->dataCount() == 0;
    emptyNote_->setVisible(empty);
    // Wrapped at word boundaries to the plot's inner width (a narrow side plot cut it off).
    emptyNote_->setText(
        wrapToWidth(noteText_, QFontMetrics(emptyNote_->font()), plot_->axisRect()->width() - 16));
}

void PlotPanel::setAxisLogScale(QCPAxis* axis, bool log) {
    axis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (log)
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    else
        axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
}

}  // namespace liftlab

#include "plot_panel.moc"
