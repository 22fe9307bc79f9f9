#include "escape_panel.h"

#include <qcustomplot.h>
#include <QResizeEvent>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "axis_rect_style.h"
#include "histogram_bins.h"
#include "log_axis_ticker.h"
#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

namespace {

const QString kShoulderBandLayer = QStringLiteral("shoulder");
const QColor kBandFill(255, 140, 60, 48);  // light orange, behind the traces
const QColor kBandEdge(215, 90, 30);       // dashed upper edge of the band
const QColor kBandText(170, 60, 20);
constexpr double kMinBandShare = 0.12;  // the band takes at least this share of the height
constexpr int kHistogramAlpha = 40;
constexpr int kMaxDwellBins = 40;
constexpr int kKeyColumns = 3;  // at most this many entries a line in the keys

// "2.1×10⁻³" for small or large numbers, plain digits in between.
QString compactNumber(double v) {
    if (!std::isfinite(v)) return QStringLiteral("—");
    if (v == 0) return QStringLiteral("0");
    const double a = std::abs(v);
    if (a >= 0.01 && a < 1e4) return QString::number(v, 'g', 3);
    int exponent = static_cast<int>(std::floor(std::log10(a)));
    double mantissa = v / std::pow(10.0, exponent);
    if (std::abs(std::round(mantissa * 100) / 100) >= 10) {  // 9.999 rounds up to 10
        mantissa /= 10;
        ++exponent;
    }
    static const QString kSuperscript[] = {
        QStringLiteral("⁰"), QStringLiteral("¹"), QStringLiteral("²"), QStringLiteral("³"),
        QStringLiteral("⁴"), QStringLiteral("⁵"), QStringLiteral("⁶"), QStringLiteral("⁷"),
        QStringLiteral("⁸"), QStringLiteral("⁹")};
    QString power = exponent < 0 ? QStringLiteral("⁻") : QString();
    for (const QChar digit : QString::number(std::abs(exponent)))
        power += kSuperscript[digit.digitValue()];
    return QString::number(mantissa, 'g', 3) + QStringLiteral("×10") + power;
}

// Shades of one colour for several coordinates of a method: dark to light in HSL lightness.
QColor shade(const QColor& base, int index, int count) {
    if (count <= 1) return base;
    const QColor hsl = base.toHsl();
    const double lightness = 0.26 + 0.30 * index / (count - 1);
    return QColor::fromHslF(hsl.hslHueF(), hsl.hslSaturationF(), lightness).toRgb();
}

// x from the first step (or 0 when it starts near 0) to the last.
QCPRange stepRange(double lo, double hi) {
    if (lo > 0 && lo < kSnapToZeroShare * hi) lo = 0;
    if (hi <= lo) hi = lo + 1;
    return QCPRange(lo, hi);
}

}  // namespace

EscapePanel::EscapePanel(QWidget* parent)
    : PlotPanel(parent, QSize(480, 360)),
      threshold_(std::log(0.05 / 0.95)),
      pushStep_(std::numeric_limits<double>::quiet_NaN()) {
    plot_->setAutoAddPlottableToLegend(false);
    plot_->legend->setVisible(false);  // shown with the first trace
    plot_->addLayer(kShoulderBandLayer, plot_->layer(QStringLiteral("main")),
                    QCustomPlot::limBelow);

    // Rows: the trace key, traces over the whole width, occupancy | dwell times, the method key
    // with the escape statistics. Keys sit outside the axes so that they never hide data.
    traceRect_ = plot_->axisRect();
    traceRect_->axis(QCPAxis::atBottom)->setLabel(tr("step"));
    traceRect_->axis(QCPAxis::atLeft)->setLabel(tr("pre-softplus weight θ̃"));
    addCentredLegendRow(plot_, 0, plot_->legend);
    auto* bottom = new QCPLayoutGrid;
    plot_->plotLayout()->addElement(2, 0, bottom);
    plot_->plotLayout()->setRowStretchFactor(1, 1.15);
    plot_->plotLayout()->setRowStretchFactor(2, 1.0);
    occupancyRect_ = new QCPAxisRect(plot_);
    dwellRect_ = new QCPAxisRect(plot_);
    bottom->addElement(0, 0, occupancyRect_);
    bottom->addElement(0, 1, dwellRect_);
    for (QCPAxisRect* rect : {occupancyRect_, dwellRect_}) styleAxisRect(rect);
    occupancyRect_->axis(QCPAxis::atBottom)->setLabel(tr("step"));
    occupancyRect_->axis(QCPAxis::atLeft)->setLabel(tr("shoulder occupancy"));
    for (QCPAxis* axis : {dwellRect_->axis(QCPAxis::atBottom), dwellRect_->axis(QCPAxis::atTop)}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<LogAxisTicker>::create());
        axis->setNumberFormat(QStringLiteral("eb"));
        axis->setNumberPrecision(0);
    }
    dwellRect_->axis(QCPAxis::atBottom)
        ->setLabel(tr("dwell in the shoulder (steps)  ·  dashed: median"));
    dwellRect_->axis(QCPAxis::atLeft)->setLabel(tr("share of exits"));
    // The left edges of traces and occupancy line up, and the right edges of traces and dwells.
    auto* left = new QCPMarginGroup(plot_);
    auto* right = new QCPMarginGroup(plot_);
    traceRect_->setMarginGroup(QCP::msLeft, left);
    occupancyRect_->setMarginGroup(QCP::msLeft, left);
    traceRect_->setMarginGroup(QCP::msRight, right);
    dwellRect_->setMarginGroup(QCP::msRight, right);

    // The key of the bottom row: one entry per method with its escape statistics.
    dwellLegend_ = new QCPLegend;
    addCentredLegendRow(plot_, 3, dwellLegend_);
    dwellLegend_->setIconTextPadding(plot_->legend->iconTextPadding());
    for (QCPLegend* key : {plot_->legend, dwellLegend_}) {
        key->setFillOrder(QCPLayoutGrid::foColumnsFirst);
        key->setColumnSpacing(28);
        key->setVisible(false);
    }

    // The shoulder band: from the bottom of the trace axes up to the threshold, full width.
    band_ = new QCPItemRect(plot_);
    band_->setLayer(kShoulderBandLayer);
    band_->setClipAxisRect(traceRect_);
    band_->setPen(Qt::NoPen);
    band_->setBrush(kBandFill);
    for (QCPItemPosition* p : {band_->topLeft, band_->bottomRight}) {
        p->setAxisRect(traceRect_);
        p->setAxes(traceRect_->axis(QCPAxis::atBottom), traceRect_->axis(QCPAxis::atLeft));
    }
    band_->topLeft->setTypeX(QCPItemPosition::ptAxisRectRatio);
    band_->topLeft->setTypeY(QCPItemPosition::ptPlotCoords);
    band_->bottomRight->setType(QCPItemPosition::ptAxisRectRatio);
    band_->bottomRight->setCoords(1, 1);
    bandEdge_ = new QCPItemStraightLine(plot_);
    bandEdge_->setLayer(kShoulderBandLayer);
    bandEdge_->setClipAxisRect(traceRect_);
    bandEdge_->setPen(QPen(kBandEdge, 1.2, Qt::DashLine));
    bandLabel_ = new QCPItemText(plot_);
    bandLabel_->setLayer(QStringLiteral("legend"));  // readable over the traces
    bandLabel_->setClipAxisRect(traceRect_);
    bandLabel_->position->setAxisRect(traceRect_);
    bandLabel_->position->setAxes(traceRect_->axis(QCPAxis::atBottom),
                                  traceRect_->axis(QCPAxis::atLeft));
    // Bottom left: the corner traces reach last (absorbed coordinates arrive there late).
    bandLabel_->position->setType(QCPItemPosition::ptAxisRectRatio);
    bandLabel_->position->setCoords(0.006, 0.985);
    bandLabel_->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    bandLabel_->setPadding(QMargins(4, 2, 4, 2));
    bandLabel_->setColor(kBandText);
    bandLabel_->setBrush(QColor(255, 255, 255, 200));
    bandLabel_->setPen(QPen(QColor(240, 175, 130)));
    bandLabel_->setText(tr("shoulder σ(θ̃) < 0.05"));
    for (QCPItemPosition* p : {bandEdge_->point1, bandEdge_->point2})
        p->setAxes(traceRect_->axis(QCPAxis::atBottom), traceRect_->axis(QCPAxis::atLeft));
    placeBand();

    traceNote_ = addEmptyNote(plot_, traceRect_, tr("no coordinate traces"));
    occupancyNote_ = addEmptyNote(plot_, occupancyRect_, tr("no occupancy data"));
    dwellNote_ = addEmptyNote(plot_, dwellRect_, tr("no completed dwells"));

    plot_->setInteractions(QCP::iRangeZoom);
    plot_->setSelectionRectMode(QCP::srmZoom);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] {
        fitTraces();
        fitOccupancy();
        redrawDwells();
        plot_->replot(QCustomPlot::rpQueuedReplot);
    });
    fitTraces();
    fitOccupancy();
    redrawDwells();
}

void EscapePanel::placeBand() {
    band_->topLeft->setCoords(0, threshold_);
    bandEdge_->point1->setCoords(0, threshold_);
    bandEdge_->point2->setCoords(1, threshold_);
}

void EscapePanel::setShoulderThreshold(double upper) {
    if (!std::isfinite(upper)) return;
    threshold_ = upper;
    placeBand();
    fitTraces();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void EscapePanel::setShoulderLabel(const QString& label) {
    bandLabel_->setText(label);
    bandLabel_->setVisible(!label.isEmpty());
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void EscapePanel::finitePoints(const QVector<double>& steps, const QVector<double>& values,
                               QVector<double>* keys, QVector<double>* vals) {
    for (int i = 0; i < std::min(steps.size(), values.size()); ++i) {
        if (!std::isfinite(steps[i]) || !std::isfinite(values[i])) continue;
        *keys << steps[i];
        *vals << values[i];
    }
}

QCPGraph* EscapePanel::traceGraph(const QString& method, int coordinate) {
    if (!order_.contains(method)) order_ << method;
    for (Trace& t : traces_)
        if (t.method == method && t.coordinate == coordinate) return t.graph;
    Trace t;
    t.method = method;
    t.coordinate = coordinate;
    t.graph =
        plot_->addGraph(traceRect_->axis(QCPAxis::atBottom), traceRect_->axis(QCPAxis::atLeft));
    traces_.push_back(t);
    return t.graph;
}

void EscapePanel::traceChanged(const QString& method) {
    recolourTraces(method);
    fitTraces();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void EscapePanel::addTrace(const QString& method, int coordinate, const QVector<double>& steps,
                           const QVector<double>& values) {
    QCPGraph* graph = traceGraph(method, coordinate);
    QVector<double> keys, vals;
    finitePoints(steps, values, &keys, &vals);
    graph->setData(keys, vals);
    traceChanged(method);
}

void EscapePanel::appendTrace(const QString& method, int coordinate, const QVector<double>& steps,
                              const QVector<double>& values) {
    QCPGraph* graph = traceGraph(method, coordinate);
    QVector<double> keys, vals;
    finitePoints(steps, values, &keys, &vals);
    graph->addData(keys, vals, /*alreadySorted=*/true);
    traceChanged(method);
}

// Shades by coordinate order; the first trace of a method carries the legend entry.
void EscapePanel::recolourTraces(const QString& method) {
    QVector<Trace*> mine;
    for (Trace& t : traces_)
        if (t.method == method) mine << &t;
    std::sort(mine.begin(), mine.end(),
              [](const Trace* a, const Trace* b) { return a->coordinate < b->coordinate; });
    const QColor base = methodColor(method);
    QStringList coordinates;
    const bool visible = traceFilter_.isEmpty() || traceFilter_ == method;
    for (int i = 0; i < mine.size(); ++i) {
        mine[i]->graph->setPen(QPen(shade(base, i, mine.size()), 1.6));
        mine[i]->graph->setVisible(visible);
        mine[i]->graph->removeFromLegend(plot_->legend);
        coordinates << QString::number(mine[i]->coordinate);
    }
    if (mine.isEmpty()) return;
    const QString name =
        mine.size() <= 4
            ? QStringLiteral("%1 · θ̃[%2]").arg(method, coordinates.join(QStringLiteral(", ")))
            : tr("%1 · %2 coordinates").arg(method).arg(mine.size());
    mine.front()->graph->setName(name);
    // The legend keeps the order in which methods first appeared.
    plot_->legend->clearItems();
    for (const QString& m : std::as_const(order_)) {
        QCPGraph* first = nullptr;
        int lowest = 0;
        for (const Trace& t : std::as_const(traces_))
            if (t.method == m && (!first || t.coordinate < lowest)) {
                first = t.graph;
                lowest = t.coordinate;
            }
        if (first && first->visible()) first->addToLegend(plot_->legend);
    }
    plot_->legend->setVisible(true);
    fitKeys(plot_->width());
}

void EscapePanel::showTracesOf(const QString& method) {
    traceFilter_ = method;
    QStringList methods;
    for (const Trace& t : std::as_const(traces_))
        if (!methods.contains(t.method)) methods << t.method;
    for (const QString& m : std::as_const(methods)) recolourTraces(m);
    fitTraces();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

int EscapePanel::visibleTraceCount() const {
    int n = 0;
    for (const Trace& t : traces_) n += t.graph->visible() ? 1 : 0;
    return n;
}

QStringList EscapePanel::traceMethods() const {
    QStringList out;
    for (const QString& m : order_)
        for (const Trace& t : traces_)
            if (t.method == m) {
                out << m;
                break;
            }
    return out;
}

void EscapePanel::setEmptyReason(const QString& reason) {
    emptyReason_ = reason;
    traceNote_->setText(reason.isEmpty() ? tr("no coordinate traces") : reason);
    occupancyNote_->setText(reason.isEmpty() ? tr("no occupancy data") : QString());
    dwellNote_->setText(reason.isEmpty() ? tr("no completed dwells") : QString());
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void EscapePanel::fitTraces() {
    bool any = false;
    QCPRange keys, values;
    for (const Trace& t : std::as_const(traces_)) {
        if (!t.graph->visible()) continue;
        bool found = false;
        const QCPRange k = t.graph->getKeyRange(found);
        if (!found) continue;
        const QCPRange v = t.graph->getValueRange(found);
        keys = any ? QCPRange(std::min(keys.lower, k.lower), std::max(keys.upper, k.upper)) : k;
        values =
            any ? QCPRange(std::min(values.lower, v.lower), std::max(values.upper, v.upper)) : v;
        any = true;
    }
    traceNote_->setVisible(!any);
    QCPAxis* x = traceRect_->axis(QCPAxis::atBottom);
    QCPAxis* y = traceRect_->axis(QCPAxis::atLeft);
    if (!any) {
        x->setRange(0, 1);
        y->setRange(threshold_ - 2, threshold_ + 4);  // the note sits above the band
        return;
    }
    x->setRange(stepRange(keys.lower, keys.upper));
    const double lo = std::min(values.lower, threshold_);
    const double hi = std::max(values.upper, threshold_);
    const double span = hi > lo ? hi - lo : 1.0;
    // The band stays visible even when every trace is above it.
    const double lower = std::min(values.lower, threshold_ - kMinBandShare * span) - 0.04 * span;
    y->setRange(lower, hi + 0.06 * span);
}

void EscapePanel::setOccupancy(const QString& method, const QVector<double>& steps,
                               const QVector<double>& fraction) {
    if (!order_.contains(method)) order_ << method;
    QCPGraph*& g = occupancy_[method];
    if (!g) {
        g = plot_->addGraph(occupancyRect_->axis(QCPAxis::atBottom),
                            occupancyRect_->axis(QCPAxis::atLeft));
        g->setName(method);
        g->setPen(QPen(methodColor(method), 2.0));
    }
    QVector<double> keys, vals;
    for (int i = 0; i < std::min(steps.size(), fraction.size()); ++i) {
        if (!std::isfinite(steps[i]) || !std::isfinite(fraction[i])) continue;
        keys << steps[i];
        vals << fraction[i];
    }
    g->setData(keys, vals);
    fitOccupancy();
    updateDwellLegend();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void EscapePanel::fitOccupancy() {
    bool any = false;
    QCPRange keys;
    double top = 0;
    for (QCPGraph* g : std::as_const(occupancy_)) {
        bool found = false;
        const QCPRange k = g->getKeyRange(found);
        if (!found) continue;
        keys = any ? QCPRange(std::min(keys.lower, k.lower), std::max(keys.upper, k.upper)) : k;
        top = std::max(top, g->getValueRange(found).upper);
        any = true;
    }
    occupancyNote_->setVisible(!any);
    QCPAxis* x = occupancyRect_->axis(QCPAxis::atBottom);
    QCPAxis* y = occupancyRect_->axis(QCPAxis::atLeft);
    x->setRange(any ? stepRange(keys.lower, keys.upper) : QCPRange(0, 1));
    // A fraction: from 0 up to the largest value, or to 1 when that is close to it.
    const double upper = top <= 0 ? 1.0 : (top > 0.85 ? 1.0 : top * 1.12);
    y->setRange(-0.03 * upper, upper * (top > 0.85 ? 1.03 : 1.0));
}

void EscapePanel::setDwellTimes(const QString& method, const QVector<double>& dwells) {
    if (!order_.contains(method)) order_ << method;
    dwells_[method] = finiteValues(dwells, /*positiveOnly=*/true);
    redrawDwells();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void EscapePanel::setEscapeStats(const QString& method, double exitRate, int exits,
                                 double medianDwell) {
    if (!order_.contains(method)) order_ << method;
    stats_[method] = Stats{exitRate, exits, medianDwell};
    redrawDwells();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void EscapePanel::setDwellNormalised(bool on) {
    normalised_ = on;
    dwellRect_->axis(QCPAxis::atLeft)->setLabel(on ? tr("share of exits") : tr("completed dwells"));
    redrawDwells();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void EscapePanel::setPush(double step, const QString& label) {
    for (QCPItemStraightLine* line : std::as_const(pushLines_)) plot_->removeItem(line);
    pushLines_.clear();
    if (pushLabel_) plot_->removeItem(pushLabel_);
    pushLabel_ = nullptr;
    pushStep_ = step;
    if (!std::isfinite(step)) return;
    for (QCPAxisRect* rect : {traceRect_, occupancyRect_}) {
        auto* line = new QCPItemStraightLine(plot_);
        line->setClipAxisRect(rect);
        for (QCPItemPosition* p : {line->point1, line->point2})
            p->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        line->point1->setCoords(step, 0);
        line->point2->setCoords(step, 1);
        line->setPen(QPen(palette().color(QPalette::WindowText), 1.2, Qt::DashLine));
        pushLines_ << line;
    }
    pushLabel_ = new QCPItemText(plot_);
    pushLabel_->setClipAxisRect(traceRect_);
    pushLabel_->setClipToAxisRect(true);
    pushLabel_->position->setAxes(traceRect_->axis(QCPAxis::atBottom),
                                  traceRect_->axis(QCPAxis::atLeft));
    pushLabel_->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    pushLabel_->position->setAxisRect(traceRect_);
    pushLabel_->position->setCoords(step, 0.02);
    pushLabel_->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    pushLabel_->setPadding(QMargins(4, 0, 0, 0));
    pushLabel_->setColor(palette().color(QPalette::WindowText));
    pushLabel_->setText(label);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void EscapePanel::setPushEscaped(const QString& method, double fraction, int exitsSince) {
    if (!order_.contains(method)) order_ << method;
    pushEscaped_[method] = {fraction, exitsSince};
    updateDwellLegend();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString EscapePanel::pushText(const QString& method) const {
    const auto it = pushEscaped_.constFind(method);
    if (it == pushEscaped_.constEnd()) return QString();
    QString text = tr("since the push: %1 % escaped").arg(compactNumber(100.0 * it->first));
    if (it->second >= 0)
        text += it->second == 1 ? tr(" · 1 exit") : tr(" · %1 exits").arg(it->second);
    return text;
}

QString EscapePanel::statsText(const QString& method) const {
    const auto it = stats_.constFind(method);
    if (it == stats_.constEnd()) return QString();
    const QString exits = it->exits == 1 ? tr("1 exit") : tr("%1 exits").arg(it->exits);
    const QString median = std::isfinite(it->medianDwell)
                               ? tr("median dwell %1 steps").arg(compactNumber(it->medianDwell))
                               : tr("no completed dwell");
    return tr("exit rate %1 /coord·step · %2 · %3").arg(compactNumber(it->exitRate), exits, median);
}

QVector<double> EscapePanel::dwellHeights(const QString& method) const {
    return dwellHeights_.value(method);
}

void EscapePanel::redrawDwells() {
    // Shared log-spaced bins, aligned to fractions of a decade.
    QVector<double> all;
    for (const QVector<double>& d : std::as_const(dwells_)) all += d;
    dwellEdges_.clear();
    dwellHeights_.clear();
    if (!all.isEmpty()) {
        const auto [minIt, maxIt] = std::minmax_element(all.cbegin(), all.cend());
        const double lo = *minIt, hi = *maxIt;
        const double decades = std::log10(hi / lo);
        int perDecade = decades <= 1 ? 10 : (decades <= 2.5 ? 6 : 4);
        // Dwell times counted in whole steps: a bin narrower than half a step would leave
        // empty teeth between the integers, so the low end limits the resolution.
        const bool integral =
            std::all_of(all.cbegin(), all.cend(), [](double v) { return v == std::round(v); });
        if (integral)
            perDecade =
                std::clamp(static_cast<int>(1.0 / std::log10(1.0 + 0.5 / lo)), 2, perDecade);
        const double a = std::floor(std::log10(lo) * perDecade) / perDecade;
        double b = std::ceil(std::log10(hi) * perDecade) / perDecade;
        if (b <= a) b = a + 1.0 / perDecade;
        const int bins = std::min(kMaxDwellBins,
                                  std::max(1, static_cast<int>(std::lround((b - a) * perDecade))));
        dwellEdges_ = makeBinEdges(std::pow(10.0, a), std::pow(10.0, b), bins, /*log=*/true);
        dwellEdges_.front() = std::min(dwellEdges_.front(), lo);
        dwellEdges_.back() = std::max(dwellEdges_.back(), hi);
    }
    double top = 0;
    for (auto it = dwells_.cbegin(); it != dwells_.cend(); ++it) {
        if (dwellEdges_.isEmpty() || it->isEmpty()) continue;
        QVector<double> heights = histogramCounts(*it, dwellEdges_);
        if (normalised_)
            for (double& h : heights) h /= it->size();
        for (double h : heights) top = std::max(top, h);
        dwellHeights_[it.key()] = heights;
    }
    updateDwellLegend();
    for (auto it = dwellGraphs_.cbegin(); it != dwellGraphs_.cend(); ++it) {
        QVector<double> keys, values;
        if (dwellHeights_.contains(it.key()))
            stepOutline(dwellEdges_, dwellHeights_.value(it.key()), &keys, &values, /*trim=*/true);
        it.value()->setData(keys, values, /*alreadySorted=*/true);
    }
    // The median of each method as a dashed vertical line.
    for (QCPItemStraightLine* line : std::as_const(medianLines_)) plot_->removeItem(line);
    medianLines_.clear();
    for (auto it = stats_.cbegin(); it != stats_.cend(); ++it) {
        if (!(it->medianDwell > 0) || !std::isfinite(it->medianDwell)) continue;
        auto* line = new QCPItemStraightLine(plot_);
        line->setClipAxisRect(dwellRect_);
        for (QCPItemPosition* p : {line->point1, line->point2})
            p->setAxes(dwellRect_->axis(QCPAxis::atBottom), dwellRect_->axis(QCPAxis::atLeft));
        line->point1->setCoords(it->medianDwell, 0);
        line->point2->setCoords(it->medianDwell, 1);
        line->setPen(QPen(methodColor(it.key()), 1.4, Qt::DashLine));
        medianLines_ << line;
    }
    dwellNote_->setVisible(dwellHeights_.isEmpty());
    QCPAxis* x = dwellRect_->axis(QCPAxis::atBottom);
    QCPAxis* y = dwellRect_->axis(QCPAxis::atLeft);
    if (dwellEdges_.isEmpty()) {
        x->setRange(1, 1000);
        y->setRange(0, normalised_ ? 1.0 : 10.0);
    } else {
        double lo = dwellEdges_.front(), hi = dwellEdges_.back();
        for (const Stats& st : std::as_const(stats_))
            if (st.medianDwell > 0 && std::isfinite(st.medianDwell)) {
                lo = std::min(lo, st.medianDwell);
                hi = std::max(hi, st.medianDwell);
            }
        x->setRange(lo / 1.15, hi * 1.15);
        y->setRange(-0.02 * top, top * 1.1);
    }
}

// One key entry for every method of the bottom row: its colour, name and escape statistics.
void EscapePanel::updateDwellLegend() {
    for (const QString& m : std::as_const(order_)) {
        const bool shown = dwells_.contains(m) || stats_.contains(m) || occupancy_.contains(m) ||
                           pushEscaped_.contains(m);
        if (!shown || dwellGraphs_.contains(m)) continue;
        QCPGraph* g =
            plot_->addGraph(dwellRect_->axis(QCPAxis::atBottom), dwellRect_->axis(QCPAxis::atLeft));
        const QColor c = methodColor(m);
        QColor fill = c;
        fill.setAlpha(kHistogramAlpha);
        g->setPen(QPen(c, 1.8));
        g->setBrush(fill);
        g->setLineStyle(QCPGraph::lsStepLeft);
        dwellGraphs_.insert(m, g);
    }
    dwellLegend_->clearItems();
    for (const QString& m : std::as_const(order_)) {
        QCPGraph* g = dwellGraphs_.value(m);
        if (!g) continue;
        QString stats = statsText(m);
        const QString pushed = pushText(m);
        if (!pushed.isEmpty())
            stats += (stats.isEmpty() ? QString() : QStringLiteral(" · ")) + pushed;
        g->setName(stats.isEmpty() ? m : m + QStringLiteral(":  ") + stats);
        g->addToLegend(dwellLegend_);
    }
    dwellLegend_->setVisible(dwellLegend_->itemCount() > 0);
    fitKeys(plot_->width());
}

void EscapePanel::fitKeys(int width) {
    fitLegendColumns(plot_->legend, width, kKeyColumns);
    fitLegendColumns(dwellLegend_, width, kKeyColumns);
}

void EscapePanel::resizeEvent(QResizeEvent* event) {
    PlotPanel::resizeEvent(event);
    fitKeys(event->size().width());
}

void EscapePanel::clear() {
    // Keys first: the dwell key is not the plot's default legend, so removing a graph would not
    // take its entry along.
    plot_->legend->clearItems();
    plot_->legend->setVisible(false);
    dwellLegend_->clearItems();
    dwellLegend_->setVisible(false);
    plot_->clearGraphs();
    traces_.clear();
    occupancy_.clear();
    dwells_.clear();
    dwellGraphs_.clear();
    stats_.clear();
    dwellHeights_.clear();
    order_.clear();
    pushEscaped_.clear();
    setPush(std::numeric_limits<double>::quiet_NaN(), QString());
    fitTraces();
    fitOccupancy();
    redrawDwells();  // also removes the median lines
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool EscapePanel::exportTo(const QString& path, int width, int height) {
    fitKeys(width);  // the keys wrap for the exported width, then for the widget again
    const bool ok = exportPlot(plot_, path, width, height, tr("escape from the shoulder"));
    fitKeys(plot_->width());
    return ok;
}

}  // namespace liftlab
