#include "loss_curve_panel.h"

#include <qcustomplot.h>
#include <QActionGroup>
#include <QClipboard>
#include <QFileDialog>
#include <QFontMetrics>
#include <QGuiApplication>
#include <QMenu>
#include <QPainter>
#include <QSaveFile>
#include <QTextStream>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>

#include "log_axis_ticker.h"
#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

namespace {

constexpr double kLinearMargin = 0.05;  // share of the range added on linear y
constexpr int kBandAlpha = 45;          // bands stay behind the curves and do not hide them
const QString kBandLayer = QStringLiteral("bands");
constexpr int kInsetLegendMax = 6;
// More points than this: lines only. 400 until the engine's steps got faster (2026-12-02, our
// tanh): four live curves of 300–380 points, antialiased with markers, took 20–25 ms per replot
// and the GUI probe's longest stall passed 20 ms; at 200 the replots stay ≤ 13 ms.
constexpr int kMarkerMaxPoints = 200;
// From this many points on, markers are one pre-drawn disc image per curve instead of an
// antialiased ellipse per point: a live run's curves with a few hundred points each took 40 ms
// per replot with ellipses (bench_gui_responsiveness, issue 12), most of it the markers.
constexpr int kPixmapMarkersFrom = 48;            // more entries than
                                                  // this would cover the curves: move aside
const QString kRawLayer = QStringLiteral("raw");  // between the bands and the smoothed curves
const QString kOverlayLayer = QStringLiteral("overlay");
constexpr int kRawAlpha = 60;            // the raw curve behind its smoothed version
constexpr double kMaxSmoothing = 0.999;  // w = 1 would freeze the average at its first value
constexpr int kReadoutDigits = 5;        // significant digits of the crosshair readout
constexpr int kBoxGap = 8;               // pixels between the crosshair line and its box

// Shortest text that reads back to the same double; "nan", "inf", "-inf" otherwise.
QString exactNumber(double v) {
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

QString csvField(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) &&
        !text.contains(QLatin1Char('\n')) && !text.contains(QLatin1Char('\r')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

// Index of the point nearest to `step` among those with a finite value (steps sorted), -1 if
// there is none. A tie goes to the earlier step.
int nearestFinite(const QVector<double>& steps, const QVector<double>& values, double step) {
    const int at =
        static_cast<int>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
    int left = at - 1, right = at;
    while (left >= 0 && !std::isfinite(values[left])) --left;
    while (right < steps.size() && !std::isfinite(values[right])) ++right;
    if (left < 0) return right < steps.size() ? right : -1;
    if (right >= steps.size()) return left;
    return step - steps[left] <= steps[right] - step ? left : right;
}

}  // namespace

LossCurvePanel::LossCurvePanel(QWidget* parent) : PlotPanel(parent) {
    plot_->addLayer(kBandLayer, plot_->layer(QStringLiteral("main")), QCustomPlot::limBelow);
    plot_->addLayer(kRawLayer, plot_->layer(QStringLiteral("main")), QCustomPlot::limBelow);
    plot_->xAxis->setLabel(tr("step"));
    plot_->legend->setVisible(false);  // shown with the first series

    // Left drag zooms into a rectangle, the wheel zooms, a double-click shows everything again.
    plot_->setInteractions(QCP::iRangeZoom);
    plot_->setSelectionRectMode(QCP::srmZoom);
    connect(plot_, &QCustomPlot::mouseWheel, this, [this] { onUserZoom(); });
    connect(plot_->selectionRect(), &QCPSelectionRect::accepted, this, [this] { onUserZoom(); });
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { rescale(); });

    // The crosshair lives on the buffered overlay layer: following the mouse redraws only it.
    plot_->layer(kOverlayLayer)->setMode(QCPLayer::lmBuffered);
    crosshairLine_ = new QCPItemLine(plot_);
    crosshairLine_->setLayer(kOverlayLayer);
    crosshairLine_->setPen(QPen(QColor(80, 80, 80), 1.0, Qt::DashLine));
    for (QCPItemPosition* p : {crosshairLine_->start, crosshairLine_->end}) {
        p->setAxes(plot_->xAxis, plot_->yAxis);
        p->setAxisRect(plot_->axisRect());
        p->setTypeX(QCPItemPosition::ptPlotCoords);
        p->setTypeY(QCPItemPosition::ptAxisRectRatio);  // from the top (0) to the bottom (1)
    }
    crosshairBox_ = new QCPItemText(plot_);
    crosshairBox_->setLayer(kOverlayLayer);
    crosshairBox_->setClipToAxisRect(false);
    crosshairBox_->position->setParentAnchor(crosshairLine_->start);  // pixels from the line top
    crosshairBox_->setTextAlignment(Qt::AlignLeft);
    crosshairBox_->setPadding(QMargins(6, 4, 6, 4));
    crosshairBox_->setBrush(QColor(255, 255, 255, 235));
    crosshairBox_->setPen(QPen(QColor(150, 150, 150)));
    crosshairBox_->setColor(QColor(30, 30, 30));
    setCrosshairItemsVisible(false);
    plot_->setMouseTracking(true);
    plot_->installEventFilter(this);
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { onMouseMove(e); });
    plot_->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(plot_, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        QMenu* menu = createContextMenu(this);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(plot_->mapToGlobal(at));
    });

    setLogY(true);
}

void LossCurvePanel::setMetric(const QString& name) {
    metric_ = name;
    QString label = name;
    plot_->yAxis->setLabel(label.replace(QLatin1Char('_'), QLatin1Char(' ')));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::setAxisLabel(const QString& label) {
    plot_->yAxis->setLabel(label);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString LossCurvePanel::axisLabel() const {
    return plot_->yAxis->label();
}

void LossCurvePanel::setLogY(bool on) {
    const bool changed = logY_ != on;
    logY_ = on;
    for (QCPAxis* axis : {plot_->yAxis, plot_->yAxis2}) {
        if (on) {
            axis->setScaleType(QCPAxis::stLogarithmic);
            axis->setTicker(QSharedPointer<LogAxisTicker>::create());
            axis->setNumberFormat(QStringLiteral("eb"));  // 10⁻² style labels
            axis->setNumberPrecision(0);
        } else {
            axis->setScaleType(QCPAxis::stLinear);
            axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
            axis->setNumberFormat(QStringLiteral("gbd"));
            axis->setNumberPrecision(6);
        }
    }
    // What is drawable changed: re-filter every curve and band from the data kept.
    for (Series& s : series_) {
        redrawSeries(s);
        redrawBand(s);
    }
    refreshCrosshair();
    if (followData_) fitAxes();
    plot_->replot(QCustomPlot::rpQueuedReplot);
    if (changed) Q_EMIT logYChanged(on);
}

LossCurvePanel::Series& LossCurvePanel::ensureSeries(const QString& method) {
    auto it = series_.find(method);
    if (it != series_.end()) return *it;
    Series s;
    s.pen = seriesPen(method);
    s.graph = plot_->addGraph();
    s.graph->setLayer(kRawLayer);
    // Log points are sparse: a small marker keeps a lone first point visible.
    s.graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    s.graph->setLineStyle(QCPGraph::lsLine);
    auto& inserted = *series_.insert(method, s);
    order_ << method;
    applySeriesStyle(inserted);
    updateLegendName(method);
    rebuildLegend();
    plot_->legend->setVisible(true);
    placeLegend();
    return inserted;
}

// Smoothing off: the raw curve in the method's pen. On: the EMA in that pen, in the legend, and
// the raw curve faint behind it.
void LossCurvePanel::applySeriesStyle(Series& s) {
    if (smoothing_ > 0) {
        if (!s.smooth) {
            s.smooth = plot_->addGraph();
            s.smooth->setLayer(QStringLiteral("main"));
            s.smooth->setPen(s.pen);
            s.smooth->setLineStyle(QCPGraph::lsLine);
            s.smooth->setName(s.graph->name());
        }
        QPen faint = s.pen;
        QColor c = faint.color();
        c.setAlpha(kRawAlpha);
        faint.setColor(c);
        faint.setWidthF(1.5);
        s.graph->setPen(faint);
    } else {
        if (s.smooth) plot_->removeGraph(s.smooth);
        s.smooth = nullptr;
        s.graph->setPen(s.pen);
    }
    updateMarkers(s);
}

// Markers keep sparse log points visible; on dense curves they only cost time (QCustomPlot's
// adaptive sampling thins lines to the pixel grid, not scatter symbols), so they go away.
void LossCurvePanel::updateMarkers(Series& s) {
    const int n = s.graph->dataCount();
    const bool dense = n > kMarkerMaxPoints;
    const int size = smoothing_ > 0 ? 3 : 4;
    const int mode = dense ? 0 : n >= kPixmapMarkersFrom ? 2 : 1;  // none, ellipses, images
    const QColor colour = s.graph->pen().color();
    if (mode != s.markerMode || size != s.markerSize || colour.rgba() != s.markerColour) {
        s.markerMode = mode;
        s.markerSize = size;
        s.markerColour = colour.rgba();
        if (mode == 2) {
            // Drawn at twice the size and shown at half: crisp on high-density screens too.
            constexpr qreal kScale = 2.0;
            QPixmap disc(QSize(size + 1, size + 1) * kScale);
            disc.setDevicePixelRatio(kScale);
            disc.fill(Qt::transparent);
            QPainter painter(&disc);
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setPen(Qt::NoPen);
            painter.setBrush(colour);
            painter.drawEllipse(QRectF(0.5, 0.5, size, size));
            painter.end();
            s.graph->setScatterStyle(QCPScatterStyle(disc));
        } else {
            s.graph->setScatterStyle(QCPScatterStyle(
                mode == 0 ? QCPScatterStyle::ssNone : QCPScatterStyle::ssDisc, size));
        }
    }
    // Adaptive sampling keeps each pixel column's extremes, so a noisy dense curve is thousands
    // of near-vertical segments: antialiasing them is most of the redraw time (measured by
    // bench/bench_gui_responsiveness.cpp), and invisible at that density.
    s.graph->setAntialiased(!dense);
    if (!s.smooth) {
        QPen pen = s.pen;
        if (dense) pen.setWidthF(1.0);  // 1-px lines take the raster engine's fast path
        if (s.graph->pen() != pen) s.graph->setPen(pen);
    }
}

// One legend entry per method, in order of first appearance: the curve drawn in full colour.
void LossCurvePanel::rebuildLegend() {
    plot_->legend->clearItems();
    for (const QString& method : std::as_const(order_)) {
        const Series& s = series_[method];
        (s.smooth ? s.smooth : s.graph)->addToLegend();
    }
}

// Members of a sweep ("cf-prox@batch_size=8") take methodColor's shade of their method's colour
// (the one sweep colour rule: every panel, pen and band alike); the n-th sweep value seen also
// gets the n-th dash pattern, so members whose shades come close stay apart.
QPen LossCurvePanel::seriesPen(const QString& method) {
    QPen pen(methodColor(method), 2.0);
    int run = -1;
    withoutRunTag(method, &run);
    if (run >= 0) {
        // Runs of a comparison: the method keeps its colour, the run has its line style.
        static const Qt::PenStyle kRunStyle[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine};
        pen.setStyle(kRunStyle[run % static_cast<int>(std::size(kRunStyle))]);
        if (run % 3 == 2) pen.setWidthF(2.4);  // dots read thinner than lines
        return pen;
    }
    const int at = method.indexOf(QLatin1Char('@'));
    if (at < 0) return pen;
    const QString suffix = method.mid(at);
    int index = sweepSuffixes_.indexOf(suffix);
    if (index < 0) {
        sweepSuffixes_ << suffix;
        index = sweepSuffixes_.size() - 1;
    }
    static const Qt::PenStyle kStyle[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                          Qt::DashDotDotLine};
    pen.setStyle(kStyle[index % static_cast<int>(std::size(kStyle))]);
    return pen;
}

void LossCurvePanel::placeLegend() {
    const bool outside = series_.size() > kInsetLegendMax;
    if (outside == (legendColumn_ != nullptr)) return;
    QCPLayoutGrid* grid = plot_->plotLayout();
    if (outside) {
        plot_->axisRect()->insetLayout()->take(plot_->legend);
        // A column beside the axis rect, legend on top, an empty stretch below it.
        legendColumn_ = new QCPLayoutGrid;
        grid->addElement(hasTitleRow() ? 1 : 0, 1, legendColumn_);
        grid->setColumnStretchFactor(1, 0.001);
        legendColumn_->addElement(0, 0, plot_->legend);
        legendColumn_->addElement(1, 0, new QCPLayoutElement(plot_));
        legendColumn_->setRowStretchFactor(0, 0.001);
        legendColumn_->setMargins(QMargins(0, 8, 8, 8));
    } else {
        legendColumn_->take(plot_->legend);
        grid->remove(legendColumn_);
        grid->simplify();
        legendColumn_ = nullptr;
        plot_->axisRect()->insetLayout()->addElement(plot_->legend, Qt::AlignTop | Qt::AlignRight);
    }
}

void LossCurvePanel::updateLegendName(const QString& method) {
    const Series& s = series_[method];
    const QString name = s.note.isEmpty() ? method : method + QStringLiteral(" — ") + s.note;
    s.graph->setName(name);
    if (s.smooth) s.smooth->setName(name);
}

bool LossCurvePanel::keep(double value) const {
    return std::isfinite(value) && (!logY_ || value > 0);
}

void LossCurvePanel::appendPoints(const QString& method, const QVector<double>& steps,
                                  const QVector<double>& values) {
    Series& s = ensureSeries(method);
    const int n = std::min(steps.size(), values.size());
    QVector<double> keys, vals;
    keys.reserve(n);
    vals.reserve(n);
    for (int i = 0; i < n; ++i) {
        if (!std::isfinite(steps[i])) continue;
        keys.push_back(steps[i]);
        vals.push_back(values[i]);
    }
    if (!keys.isEmpty()) {
        const bool after = std::is_sorted(keys.cbegin(), keys.cend()) &&
                           (s.steps.isEmpty() || keys.front() >= s.steps.back());
        if (after) {
            // The usual live case: extend the kept data, the drawn curves and the EMA.
            const int from = s.steps.size();
            s.steps += keys;
            s.values += vals;
            QVector<double> drawnKeys, drawnVals;
            for (int i = 0; i < keys.size(); ++i) {
                if (!keep(vals[i])) continue;
                drawnKeys.push_back(keys[i]);
                drawnVals.push_back(vals[i]);
            }
            if (!drawnKeys.isEmpty()) s.graph->addData(drawnKeys, drawnVals, true);
            updateMarkers(s);
            if (s.smooth) {
                extendSmoothed(s, from);
                drawnKeys.clear();
                drawnVals.clear();
                for (int i = from; i < s.steps.size(); ++i) {
                    if (!keep(s.smoothed[i])) continue;
                    drawnKeys.push_back(s.steps[i]);
                    drawnVals.push_back(s.smoothed[i]);
                }
                if (!drawnKeys.isEmpty()) s.smooth->addData(drawnKeys, drawnVals, true);
            }
        } else {
            // Earlier steps: merge in step order (stable, so equal steps keep arrival order).
            QVector<double> allSteps = s.steps + keys, allValues = s.values + vals;
            QVector<int> order(allSteps.size());
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(),
                             [&](int a, int b) { return allSteps[a] < allSteps[b]; });
            s.steps.resize(order.size());
            s.values.resize(order.size());
            for (int i = 0; i < order.size(); ++i) {
                s.steps[i] = allSteps[order[i]];
                s.values[i] = allValues[order[i]];
            }
            recomputeSmoothed(s);
            redrawSeries(s);
        }
    }
    refreshCrosshair();
    if (followData_) fitAxes();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::recomputeSmoothed(Series& s) const {
    s.smoothed.clear();
    s.emaLast = 0.0;
    s.emaCount = 0;
    if (smoothing_ > 0) extendSmoothed(s, 0);
}

// Continues the debiased EMA (see the header) over the raw points from index `from` on.
void LossCurvePanel::extendSmoothed(Series& s, int from) const {
    const double w = smoothing_;
    s.smoothed.resize(s.values.size());
    for (int i = from; i < s.values.size(); ++i) {
        const double x = s.values[i];
        if (!std::isfinite(x)) {
            s.smoothed[i] = kNaN;
            continue;
        }
        s.emaLast = w * s.emaLast + (1.0 - w) * x;
        ++s.emaCount;
        s.smoothed[i] = s.emaLast / (1.0 - std::pow(w, s.emaCount));
    }
}

// Redraws the raw and smoothed curves from the kept data (after a merge or an axis change).
void LossCurvePanel::redrawSeries(Series& s) {
    QVector<double> keys, vals, smoothKeys, smoothVals;
    for (int i = 0; i < s.steps.size(); ++i) {
        if (keep(s.values[i])) {
            keys.push_back(s.steps[i]);
            vals.push_back(s.values[i]);
        }
        if (s.smooth && i < s.smoothed.size() && keep(s.smoothed[i])) {
            smoothKeys.push_back(s.steps[i]);
            smoothVals.push_back(s.smoothed[i]);
        }
    }
    s.graph->setData(keys, vals, /*alreadySorted=*/true);
    updateMarkers(s);
    if (s.smooth) s.smooth->setData(smoothKeys, smoothVals, /*alreadySorted=*/true);
}

void LossCurvePanel::redrawBand(Series& s) {
    if (!s.bandLo) return;
    QVector<double> keys, los, his;
    for (int i = 0; i < s.bandSteps.size(); ++i) {
        if (!keep(s.bandLoValues[i]) || !keep(s.bandHiValues[i])) continue;
        keys.push_back(s.bandSteps[i]);
        los.push_back(s.bandLoValues[i]);
        his.push_back(s.bandHiValues[i]);
    }
    s.bandLo->setData(keys, los);
    s.bandHi->setData(keys, his);
}

void LossCurvePanel::setSmoothing(double weight) {
    const double w = std::isfinite(weight) ? std::clamp(weight, 0.0, kMaxSmoothing) : 0.0;
    if (w == smoothing_) return;
    smoothing_ = w;
    for (Series& s : series_) {
        applySeriesStyle(s);
        recomputeSmoothed(s);
        redrawSeries(s);
    }
    rebuildLegend();
    refreshCrosshair();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QPen LossCurvePanel::seriesPenOf(const QString& method) const {
    const auto it = series_.constFind(method);
    return it == series_.constEnd() ? QPen() : it->pen;
}

QCPGraph* LossCurvePanel::rawGraph(const QString& method) const {
    const auto it = series_.constFind(method);
    return it == series_.constEnd() ? nullptr : it->graph;
}

QCPGraph* LossCurvePanel::smoothedGraph(const QString& method) const {
    const auto it = series_.constFind(method);
    return it == series_.constEnd() ? nullptr : it->smooth;
}

void LossCurvePanel::setBand(const QString& method, const QVector<double>& steps,
                             const QVector<double>& lo, const QVector<double>& hi) {
    Series& s = ensureSeries(method);
    if (!s.bandLo) {
        const QColor color = methodColor(method);
        QColor fill = color;
        fill.setAlpha(kBandAlpha);
        s.bandLo = plot_->addGraph();
        s.bandHi = plot_->addGraph();
        for (QCPGraph* g : {s.bandLo, s.bandHi}) {
            g->setLayer(kBandLayer);
            g->setPen(Qt::NoPen);
            g->removeFromLegend();
        }
        s.bandHi->setBrush(fill);
        s.bandHi->setChannelFillGraph(s.bandLo);
    }
    const int n = std::min({steps.size(), lo.size(), hi.size()});
    QVector<int> order;
    for (int i = 0; i < n; ++i)
        if (std::isfinite(steps[i])) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return steps[a] < steps[b]; });
    s.bandSteps.clear();
    s.bandLoValues.clear();
    s.bandHiValues.clear();
    for (int i : std::as_const(order)) {
        s.bandSteps.push_back(steps[i]);
        s.bandLoValues.push_back(lo[i]);
        s.bandHiValues.push_back(hi[i]);
    }
    redrawBand(s);
    if (followData_) fitAxes();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::setSeriesNote(const QString& method, const QString& note) {
    ensureSeries(method).note = note;
    updateLegendName(method);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::removeEventMarkers() {
    for (QCPItemText* t : std::as_const(eventTexts_)) plot_->removeItem(t);
    for (QCPItemLine* l : std::as_const(eventLines_)) plot_->removeItem(l);
    eventTexts_.clear();
    eventLines_.clear();
}

void LossCurvePanel::setEventMarkers(const QVector<EventMarker>& markers) {
    removeEventMarkers();
    // Labels of events at nearby steps would overprint: each next label one line lower.
    int row = 0;
    double lastStep = std::numeric_limits<double>::quiet_NaN();
    for (const EventMarker& m : markers) {
        QColor colour = seriesPenOf(m.method).color();
        if (!series_.contains(m.method)) colour = methodColor(m.method);
        auto* line = new QCPItemLine(plot_);
        line->setPen(QPen(colour, 1.2, Qt::DashLine));
        for (QCPItemPosition* p : {line->start, line->end}) {
            p->setAxes(plot_->xAxis, plot_->yAxis);
            p->setAxisRect(plot_->axisRect());
            p->setTypeX(QCPItemPosition::ptPlotCoords);
            p->setTypeY(QCPItemPosition::ptAxisRectRatio);
        }
        line->start->setCoords(m.step, 0.0);
        line->end->setCoords(m.step, 1.0);
        row = m.step == lastStep ? row + 1 : 0;
        lastStep = m.step;
        auto* text = new QCPItemText(plot_);
        text->position->setParentAnchor(line->start);
        text->position->setCoords(4, 4 + 16 * row);  // pixels right of and below the line top
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        text->setText(m.label);
        text->setColor(colour);
        text->setBrush(QColor(255, 255, 255, 200));
        text->setPadding(QMargins(2, 1, 2, 1));
        eventLines_ << line;
        eventTexts_ << text;
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QStringList LossCurvePanel::eventMarkerLabels() const {
    QStringList out;
    for (const QCPItemText* t : eventTexts_) out << t->text();
    return out;
}

QColor LossCurvePanel::eventMarkerColour(int i) const {
    return i >= 0 && i < eventLines_.size() ? eventLines_[i]->pen().color() : QColor();
}

void LossCurvePanel::clear() {
    removeEventMarkers();
    hideCrosshair();
    plot_->clearGraphs();
    series_.clear();
    order_.clear();
    sweepSuffixes_.clear();
    placeLegend();
    plot_->legend->setVisible(false);  // an empty legend is a stray box
    followData_ = true;
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

int LossCurvePanel::seriesCount() const {
    return series_.size();
}

int LossCurvePanel::pointCount(const QString& method) const {
    const auto it = series_.constFind(method);
    return it == series_.constEnd() ? 0 : it->graph->dataCount();
}

void LossCurvePanel::rescale() {
    followData_ = true;
    fitAxes();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::onUserZoom() {
    followData_ = false;
}

void LossCurvePanel::fitAxes() {
    bool any = false;
    for (const Series& s : std::as_const(series_)) any = any || !s.graph->data()->isEmpty();
    if (!any) return;
    plot_->rescaleAxes(/*onlyVisiblePlottables=*/true);
    // Steps start at 0: the first logged point sits a little inside the box, not on its edge
    // (unless that would leave much of the plot empty, as for a short run).
    const QCPRange x = plot_->xAxis->range();
    if (x.lower > 0 && x.lower < kSnapToZeroShare * x.upper) plot_->xAxis->setRangeLower(0);
    QCPRange y = plot_->yAxis->range();
    if (logY_) {
        y.lower /= kLogMargin;
        y.upper *= kLogMargin;
    } else {
        const double pad = std::max(y.size() * kLinearMargin, 1e-12);
        y.lower -= pad;
        y.upper += pad;
    }
    plot_->yAxis->setRange(y);
}

bool LossCurvePanel::exportTo(const QString& path, int width, int height) {
    // The crosshair that follows the mouse is not part of the figure (a pinned one is).
    const bool hovering = crosshairVisible() && !crosshairPinned_;
    if (hovering) setCrosshairItemsVisible(false);
    const bool ok = exportPlot(plot_, path, width, height, metric_);
    if (hovering) setCrosshairItemsVisible(true);
    return ok;
}

void LossCurvePanel::copyToClipboard(int width, int height) {
    if (width <= 0 || height <= 0) return;
    const bool hovering = crosshairVisible() && !crosshairPinned_;
    if (hovering) setCrosshairItemsVisible(false);
    const QImage image = plot_->toPixmap(width, height, 1.0).toImage();
    if (hovering) setCrosshairItemsVisible(true);
    QGuiApplication::clipboard()->setImage(image);
    plot_->replot(QCustomPlot::rpQueuedReplot);  // laid out for the widget again
}

bool LossCurvePanel::exportCsv(const QString& path) const {
    struct Row {
        double step;
        QString value, smoothed, lo, hi;
    };
    bool anyBand = false;
    for (const Series& s : series_) anyBand = anyBand || s.bandLo;
    const bool smoothed = smoothing_ > 0;

    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) return false;
    QTextStream out(&file);
    out << "method,step,value";
    if (smoothed) out << ",smoothed";
    if (anyBand) out << ",band_lo,band_hi";
    out << '\n';
    for (const QString& method : order_) {
        const Series& s = *series_.constFind(method);
        QVector<Row> rows;
        std::map<double, QVector<int>> rowsAt;  // step → rows still without a band value
        for (int i = 0; i < s.steps.size(); ++i) {
            const bool hasSmoothed =
                smoothed && i < s.smoothed.size() && std::isfinite(s.smoothed[i]);
            rows.push_back({s.steps[i],
                            exactNumber(s.values[i]),
                            hasSmoothed ? exactNumber(s.smoothed[i]) : QString(),
                            {},
                            {}});
            rowsAt[s.steps[i]].push_back(i);
        }
        if (s.bandLo) {
            for (int j = 0; j < s.bandSteps.size(); ++j) {
                const QString lo = exactNumber(s.bandLoValues[j]);
                const QString hi = exactNumber(s.bandHiValues[j]);
                auto it = rowsAt.find(s.bandSteps[j]);
                if (it != rowsAt.end() && !it->second.isEmpty()) {
                    Row& row = rows[it->second.takeFirst()];
                    row.lo = lo;
                    row.hi = hi;
                } else {
                    rows.push_back({s.bandSteps[j], {}, {}, lo, hi});
                }
            }
            std::stable_sort(rows.begin(), rows.end(),
                             [](const Row& a, const Row& b) { return a.step < b.step; });
        }
        const QString name = csvField(method);
        for (const Row& row : std::as_const(rows)) {
            out << name << ',' << exactNumber(row.step) << ',' << row.value;
            if (smoothed) out << ',' << row.smoothed;
            if (anyBand) out << ',' << row.lo << ',' << row.hi;
            out << '\n';
        }
    }
    out.flush();
    return out.status() == QTextStream::Ok && file.commit();
}

// ---- crosshair -------------------------------------------------------------------------------

void LossCurvePanel::setCrosshairEnabled(bool on) {
    crosshairEnabled_ = on;
    if (!on) hideCrosshair();
}

QString LossCurvePanel::readoutAt(double step) const {
    if (order_.isEmpty()) return {};
    // Steps are integers in the lab; a zoomed-in view of a short run may want a decimal.
    const QCPRange x = plot_->xAxis->range();
    const QString at =
        x.size() >= 50 ? QString::number(std::round(step), 'f', 0) : QString::number(step, 'g', 4);
    QStringList lines{tr("step %1").arg(at)};
    for (const QString& method : order_) {
        const Series& s = *series_.constFind(method);
        const int i = nearestFinite(s.steps, s.values, step);
        if (i < 0) {
            lines << method + QStringLiteral(": —");
            continue;
        }
        QString line = QStringLiteral("%1 @%2: %3")
                           .arg(method, QString::number(s.steps[i], 'g', 10),
                                QString::number(s.values[i], 'g', kReadoutDigits));
        if (smoothing_ > 0 && i < s.smoothed.size())
            line += tr(" (smoothed %1)").arg(QString::number(s.smoothed[i], 'g', kReadoutDigits));
        lines << line;
    }
    return lines.join(QLatin1Char('\n'));
}

void LossCurvePanel::showCrosshairAt(double step) {
    if (!std::isfinite(step) || series_.isEmpty()) return;
    crosshairPinned_ = true;
    placeCrosshair(step);
    setCrosshairItemsVisible(true);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::hideCrosshair() {
    crosshairPinned_ = false;
    if (!crosshairVisible()) return;
    setCrosshairItemsVisible(false);
    plot_->layer(kOverlayLayer)->replot();
}

bool LossCurvePanel::crosshairVisible() const {
    return crosshairLine_->visible();
}

QString LossCurvePanel::crosshairText() const {
    return crosshairVisible() ? crosshairBox_->text() : QString();
}

void LossCurvePanel::setCrosshairItemsVisible(bool on) {
    crosshairLine_->setVisible(on);
    crosshairBox_->setVisible(on);
    for (QCPItemTracer* t : std::as_const(tracers_))
        t->setVisible(on && t->property("used").toBool());
}

void LossCurvePanel::refreshCrosshair() {
    if (crosshairVisible()) placeCrosshair(crosshairStep_);
}

void LossCurvePanel::onMouseMove(QMouseEvent* event) {
    if (!crosshairEnabled_) return;
    const QPointF pos = event->position();
    if (series_.isEmpty() || !QRectF(plot_->axisRect()->rect()).contains(pos)) {
        if (!crosshairPinned_) hideCrosshair();
        return;
    }
    crosshairPinned_ = false;  // the mouse takes over a pinned crosshair
    placeCrosshair(plot_->xAxis->pixelToCoord(pos.x()));
    setCrosshairItemsVisible(true);
    plot_->layer(kOverlayLayer)->replot();
}

bool LossCurvePanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && event->type() == QEvent::Leave && !crosshairPinned_) hideCrosshair();
    return QWidget::eventFilter(watched, event);
}

// Line at `step`, the readout box beside it (right of the line unless it would leave the plot,
// below the legend where they would overlap) and a dot on each method's drawn curve.
void LossCurvePanel::placeCrosshair(double step) {
    crosshairStep_ = step;
    crosshairLine_->start->setCoords(step, 0.0);
    crosshairLine_->end->setCoords(step, 1.0);
    const QString text = readoutAt(step);
    crosshairBox_->setText(text);

    const QRect rect = plot_->axisRect()->rect();
    const QMargins pad = crosshairBox_->padding();
    const QSize box = QFontMetrics(crosshairBox_->font())
                          .boundingRect(QRect(0, 0, 4096, 4096), Qt::AlignLeft | Qt::AlignTop, text)
                          .size()
                          .grownBy(pad);
    // Right of the line in the left part of the plot, left of it in the right part (decided on
    // the axis range, so an export at another size agrees), unless the box would not fit there.
    const double px = plot_->xAxis->coordToPixel(step);
    const QCPRange x = plot_->xAxis->range();
    const bool fitsRight = px + kBoxGap + box.width() <= rect.right();
    const bool fitsLeft = px - kBoxGap - box.width() >= rect.left();
    const bool preferRight = x.size() <= 0 || (step - x.lower) / x.size() < 0.55;
    const bool right = preferRight ? fitsRight || !fitsLeft : !fitsLeft && fitsRight;
    const double left = right ? px + kBoxGap : px - kBoxGap - box.width();
    double dy = kBoxGap;
    const QRect legend = plot_->legend->outerRect();
    if (plot_->legend->visible() && !legendColumn_ && legend.isValid() && left < legend.right() &&
        left + box.width() > legend.left())
        dy = legend.bottom() - rect.top() + kBoxGap;
    crosshairBox_->setPositionAlignment(Qt::AlignTop | (right ? Qt::AlignLeft : Qt::AlignRight));
    crosshairBox_->position->setCoords(right ? kBoxGap : -kBoxGap, dy);

    while (tracers_.size() < order_.size()) {
        auto* t = new QCPItemTracer(plot_);
        t->setLayer(kOverlayLayer);
        t->setStyle(QCPItemTracer::tsCircle);
        t->setSize(7);
        t->setBrush(Qt::white);
        tracers_.push_back(t);
    }
    for (int k = 0; k < tracers_.size(); ++k) {
        QCPItemTracer* t = tracers_[k];
        bool used = false;
        if (k < order_.size()) {
            const Series& s = series_[order_[k]];
            const int i = nearestFinite(s.steps, s.values, step);
            const double y = i < 0 ? kNaN : (s.smooth ? s.smoothed.value(i, kNaN) : s.values[i]);
            if (i >= 0 && keep(y)) {
                t->position->setCoords(s.steps[i], y);
                t->setPen(QPen(s.pen.color(), 1.8));
                used = true;
            }
        }
        t->setProperty("used", used);
        t->setVisible(used && crosshairLine_->visible());
    }
}

// ---- context menu ----------------------------------------------------------------------------

QMenu* LossCurvePanel::createContextMenu(QWidget* parent) {
    auto* menu = new QMenu(parent);
    menu->addAction(tr("Copy image"), this,
                    [this] { copyToClipboard(plot_->width(), plot_->height()); });
    menu->addAction(tr("Save figure…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save figure"), metric_ + QStringLiteral(".png"),
            tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"));
        if (!path.isEmpty()) exportTo(path, plot_->width(), plot_->height());
    });
    menu->addAction(tr("Save data as CSV…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save data"), metric_ + QStringLiteral(".csv"), tr("CSV (*.csv)"));
        if (!path.isEmpty()) exportCsv(path);
    });
    menu->addSeparator();
    QAction* log = menu->addAction(tr("Log y axis"), this, [this](bool on) { setLogY(on); });
    log->setCheckable(true);
    log->setChecked(logY_);
    QMenu* smoothingMenu = menu->addMenu(tr("Smoothing"));
    auto* group = new QActionGroup(smoothingMenu);
    for (double w : {0.0, 0.6, 0.8, 0.9, 0.95, 0.99}) {
        QAction* a = smoothingMenu->addAction(w == 0 ? tr("Off") : QString::number(w), this,
                                              [this, w] { setSmoothing(w); });
        a->setCheckable(true);
        a->setChecked(w == smoothing_);
        a->setData(w);
        group->addAction(a);
    }
    QAction* cross = menu->addAction(tr("Crosshair readout"), this,
                                     [this](bool on) { setCrosshairEnabled(on); });
    cross->setCheckable(true);
    cross->setChecked(crosshairEnabled_);
    menu->addAction(tr("Reset zoom"), this, [this] { rescale(); });
    return menu;
}

}  // namespace liftlab
