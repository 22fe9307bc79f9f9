#include "histogram_panel.h"

#include <qcustomplot.h>
#include <QResizeEvent>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "axis_rect_style.h"
#include "histogram_bins.h"
#include "log_axis_ticker.h"
#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

namespace {

constexpr int kMinAutoBins = 5;
constexpr int kMaxAutoBins = 40;
constexpr int kFillAlpha = 45;
constexpr double kXMargin = 0.03;  // share of the bin range added on both sides
constexpr int kLanePixels = 24;    // height of one method's lane in the strip
constexpr int kLegendColumns = 3;  // at most this many legend entries a line

}  // namespace

HistogramPanel::HistogramPanel(QWidget* parent) : PlotPanel(parent), stripRect_(nullptr) {
    plot_->setAutoAddPlottableToLegend(false);

    // Rows: legend, histogram, strip of the individual values (sharing the histogram's x).
    QCPAxisRect* hist = plot_->axisRect();
    addCentredLegendRow(plot_, 0, plot_->legend);
    plot_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot_->legend->setColumnSpacing(24);
    plot_->legend->setVisible(false);

    stripRect_ = new QCPAxisRect(plot_);
    plot_->plotLayout()->addElement(2, 0, stripRect_);
    plot_->plotLayout()->setRowStretchFactor(2, 0.001);
    plot_->plotLayout()->setRowSpacing(0);
    styleAxisRect(stripRect_);
    stripRect_->axis(QCPAxis::atLeft)->grid()->setVisible(false);
    stripRect_->axis(QCPAxis::atLeft)->grid()->setSubGridVisible(false);
    stripRect_->axis(QCPAxis::atLeft)->setSubTicks(false);
    stripRect_->axis(QCPAxis::atRight)->setSubTicks(false);
    // The strip takes the x tick labels; the histogram above shows none of its own.
    hist->axis(QCPAxis::atBottom)->setTickLabels(false);
    hist->setAutoMargins(QCP::msLeft | QCP::msRight | QCP::msTop);
    hist->setMargins(QMargins(0, 0, 0, 0));
    stripRect_->setAutoMargins(QCP::msLeft | QCP::msRight | QCP::msBottom);
    stripRect_->setMargins(QMargins(0, 6, 0, 0));
    auto* left = new QCPMarginGroup(plot_);
    auto* right = new QCPMarginGroup(plot_);
    hist->setMarginGroup(QCP::msLeft, left);
    stripRect_->setMarginGroup(QCP::msLeft, left);
    hist->setMarginGroup(QCP::msRight, right);
    stripRect_->setMarginGroup(QCP::msRight, right);
    connect(hist->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
            stripRect_->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::setRange));

    hist->axis(QCPAxis::atLeft)->setLabel(tr("count"));
    // Counts of a few seeds: whole-number ticks.
    auto counts = QSharedPointer<QCPAxisTickerFixed>::create();
    counts->setTickStep(1);
    counts->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    for (QCPAxis* axis : {hist->axis(QCPAxis::atLeft), hist->axis(QCPAxis::atRight)}) {
        axis->setTicker(counts);
        axis->setSubTicks(false);
    }
    setValueLabel(tr("value"));
    emptyNote_ = addEmptyNote(plot_, hist, tr("no samples"));
    plot_->setInteractions(QCP::iRangeZoom);
    hist->setRangeZoom(Qt::Horizontal);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { redraw(); });
    redraw();
}

QCPAxisRect* HistogramPanel::histogramRect() const {
    return plot_->axisRect(0);
}

void HistogramPanel::setValueLabel(const QString& label) {
    stripRect_->axis(QCPAxis::atBottom)->setLabel(label);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HistogramPanel::setSamples(const QString& method, const QVector<double>& values) {
    if (!order_.contains(method)) order_ << method;
    samples_[method] = finiteValues(values);
    redraw();
}

void HistogramPanel::setBinCount(int bins) {
    bins_ = std::max(bins, 0);
    redraw();
}

void HistogramPanel::setLogScale(bool on) {
    log_ = on;
    QCPAxisRect* hist = histogramRect();
    for (QCPAxis* axis : {hist->axis(QCPAxis::atBottom), hist->axis(QCPAxis::atTop),
                          stripRect_->axis(QCPAxis::atBottom), stripRect_->axis(QCPAxis::atTop)}) {
        axis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        if (on)
            axis->setTicker(QSharedPointer<LogAxisTicker>::create());
        else
            axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        axis->setNumberFormat(on ? QStringLiteral("eb") : QStringLiteral("gb"));
        axis->setNumberPrecision(on ? 0 : 6);
    }
    redraw();
}

void HistogramPanel::clear() {
    order_.clear();
    samples_.clear();
    redraw();
}

QVector<double> HistogramPanel::drawn(const QString& method) const {
    return finiteValues(samples_.value(method), /*positiveOnly=*/log_);
}

int HistogramPanel::sampleCount(const QString& method) const {
    return drawn(method).size();
}

void HistogramPanel::redraw() {
    plot_->clearPlottables();
    for (int i = plot_->itemCount() - 1; i >= 0; --i)
        if (plot_->item(i) != emptyNote_) plot_->removeItem(i);
    plot_->legend->clearItems();
    counts_.clear();
    edges_.clear();

    QVector<double> pooled;
    for (const QString& m : std::as_const(order_)) pooled += drawn(m);
    if (!pooled.isEmpty()) {
        const auto [lo, hi] = std::minmax_element(pooled.cbegin(), pooled.cend());
        const int bins =
            bins_ > 0 ? bins_ : freedmanDiaconisBins(pooled, kMinAutoBins, kMaxAutoBins, log_);
        edges_ = makeBinEdges(*lo, *hi, bins, log_);
    }

    QCPAxisRect* hist = histogramRect();
    QCPAxis* x = hist->axis(QCPAxis::atBottom);
    QCPAxis* y = hist->axis(QCPAxis::atLeft);
    QCPAxis* sx = stripRect_->axis(QCPAxis::atBottom);
    QCPAxis* sy = stripRect_->axis(QCPAxis::atLeft);
    auto lanes = QSharedPointer<QCPAxisTickerText>::create();
    const int n = order_.size();
    double top = 0;
    for (int i = 0; i < n; ++i) {
        const QString& m = order_[i];
        const QVector<double> values = drawn(m);
        const QColor c = methodColor(m);
        QColor fill = c;
        fill.setAlpha(kFillAlpha);
        // The histogram: fill plus step outline, legend "method (n = …, median …)".
        auto* g = plot_->addGraph(x, y);
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setPen(QPen(c, 2.0));
        g->setBrush(fill);
        QString name = m;
        if (!edges_.isEmpty()) {
            const QVector<double> counts = histogramCounts(values, edges_);
            counts_[m] = counts;
            for (double h : counts) top = std::max(top, h);
            QVector<double> keys, heights;
            stepOutline(edges_, counts, &keys, &heights, /*trim=*/true);
            g->setData(keys, heights, /*alreadySorted=*/true);
        }
        QVector<double> sorted = values;
        std::sort(sorted.begin(), sorted.end());
        if (sorted.isEmpty())
            name += tr("  (n = 0)");
        else
            name += tr("  (n = %1, median %2)")
                        .arg(sorted.size())
                        .arg(QString::number(sortedQuantile(sorted, 0.5), 'g', 4));
        g->setName(name);
        g->addToLegend(plot_->legend);

        // The strip: lane n − i (the first method on top), one dot per value, a bar at the median.
        const double lane = n - i;
        lanes->addTick(lane, m);
        auto* dots = plot_->addGraph(sx, sy);
        dots->setLineStyle(QCPGraph::lsNone);
        QColor dotFill = c;
        dotFill.setAlpha(150);
        dots->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssCircle, c.darker(130), dotFill, 8));
        dots->setData(sorted, QVector<double>(sorted.size(), lane), /*alreadySorted=*/true);
        if (!sorted.isEmpty()) {
            auto* median = new QCPItemLine(plot_);
            median->setClipAxisRect(stripRect_);
            for (QCPItemPosition* p : {median->start, median->end}) p->setAxes(sx, sy);
            const double at = sortedQuantile(sorted, 0.5);
            median->start->setCoords(at, lane - 0.38);
            median->end->setCoords(at, lane + 0.38);
            median->setPen(QPen(c.darker(150), 2.5));
        }
    }
    plot_->legend->setVisible(n > 0);
    fitLegendColumns(plot_->legend, plot_->width(), kLegendColumns);
    emptyNote_->setVisible(edges_.isEmpty());
    for (QCPAxis* axis : {sy, stripRect_->axis(QCPAxis::atRight)}) axis->setTicker(lanes);
    sy->setRange(0.4, std::max(n, 1) + 0.6);
    // The strip is as tall as its lanes; the histogram gets the rest.
    const int stripHeight = std::max(n, 1) * kLanePixels + 6;
    stripRect_->setMinimumSize(0, stripHeight);
    stripRect_->setMaximumSize(QWIDGETSIZE_MAX, stripHeight);
    stripRect_->setSizeConstraintRect(QCPLayoutElement::scrInnerRect);

    if (edges_.isEmpty()) {
        x->setRange(log_ ? QCPRange(1, 10) : QCPRange(0, 1));
        y->setRange(0, 5);
    } else if (log_) {
        const double pad = std::pow(edges_.back() / edges_.front(), kXMargin);
        x->setRange(edges_.front() / pad, edges_.back() * pad);
        y->setRange(0, top * 1.08);
    } else {
        const double pad = (edges_.back() - edges_.front()) * kXMargin;
        x->setRange(edges_.front() - pad, edges_.back() + pad);
        y->setRange(0, top * 1.08);
    }
    sx->setRange(x->range());
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HistogramPanel::resizeEvent(QResizeEvent* event) {
    PlotPanel::resizeEvent(event);
    fitLegendColumns(plot_->legend, event->size().width(), kLegendColumns);
}

bool HistogramPanel::exportTo(const QString& path, int width, int height) {
    fitLegendColumns(plot_->legend, width, kLegendColumns);  // wrap for the exported width
    const bool ok =
        exportPlot(plot_, path, width, height, stripRect_->axis(QCPAxis::atBottom)->label());
    fitLegendColumns(plot_->legend, plot_->width(), kLegendColumns);
    return ok;
}

void HistogramPanel::setEmptyReason(const QString& reason) {
    emptyNote_->setText(reason.isEmpty() ? tr("no samples") : reason);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace liftlab
