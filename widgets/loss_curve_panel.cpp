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

#include "curve_crosshair.h"
#include "curve_series.h"
#include "curve_style.h"
#include "log_axis_ticker.h"
#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

namespace {

constexpr double kLinearMargin = 0.05;  // share of the range added on linear y
constexpr int kBandAlpha = 45;          // bands stay behind the curves and do not hide them
const QString kBandLayer = QStringLiteral("bands");
constexpr int kInsetLegendMax = 6;  // more legend entries than this would cover the curves
const QString kRawLayer = QStringLiteral("raw");  // between the bands and the smoothed curves
const QString kOverlayLayer = QStringLiteral("overlay");
constexpr int kRawAlpha = 60;      // the raw curve behind its smoothed version
constexpr int kReadoutDigits = 5;  // significant digits of the crosshair readout

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
    crosshair_ = std::make_unique<CurveCrosshair>(plot_, kOverlayLayer);
    markers_ = std::make_unique<CurveMarkers>(plot_);
    plot_->setMouseTracking(true);
    plot_->installEventFilter(this);
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { onMouseMove(e); });
    plot_->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(plot_, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        QMenu* menu = createContextMenu(this, plot_->xAxis->pixelToCoord(at.x()));
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
    s.data.setSmoothing(smoothing_);
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

void LossCurvePanel::updateMarkers(Series& s) {
    updateCurveMarkers(s.graph, s.pen, smoothing_ > 0 ? 3 : 4, /*ownPenShown=*/!s.smooth,
                       &s.markers);
}

// One legend entry per method, in order of first appearance: the curve drawn in full colour.
void LossCurvePanel::rebuildLegend() {
    plot_->legend->clearItems();
    for (const QString& method : std::as_const(order_)) {
        const Series& s = series_[method];
        (s.smooth ? s.smooth : s.graph)->addToLegend();
    }
}

QPen LossCurvePanel::seriesPen(const QString& method) {
    return curvePen(method, &sweepSuffixes_);
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
    const int before = s.data.size();
    const int from = s.data.append(steps, values);
    if (from == 0 && before > 0) {
        redrawSeries(s);  // earlier steps were merged in
    } else if (from < s.data.size()) {
        // The usual live case: extend the drawn curves.
        const auto keepIt = [this](double v) { return keep(v); };
        QVector<double> keys, vals;
        s.data.drawable(from, false, keepIt, &keys, &vals);
        if (!keys.isEmpty()) s.graph->addData(keys, vals, true);
        updateMarkers(s);
        if (s.smooth) {
            keys.clear();
            vals.clear();
            s.data.drawable(from, true, keepIt, &keys, &vals);
            if (!keys.isEmpty()) s.smooth->addData(keys, vals, true);
        }
    }
    refreshCrosshair();
    if (followData_) fitAxes();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

// Redraws the raw and smoothed curves from the kept data (after a merge or an axis change).
void LossCurvePanel::redrawSeries(Series& s) {
    const auto keepIt = [this](double v) { return keep(v); };
    QVector<double> keys, vals;
    s.data.drawable(0, false, keepIt, &keys, &vals);
    s.graph->setData(keys, vals, /*alreadySorted=*/true);
    updateMarkers(s);
    if (!s.smooth) return;
    keys.clear();
    vals.clear();
    s.data.drawable(0, true, keepIt, &keys, &vals);
    s.smooth->setData(keys, vals, /*alreadySorted=*/true);
}

void LossCurvePanel::redrawBand(Series& s) {
    if (!s.bandLo) return;
    QVector<double> keys, los, his;
    const CurveSeries& d = s.data;
    for (int i = 0; i < d.bandSteps().size(); ++i) {
        if (!keep(d.bandLo()[i]) || !keep(d.bandHi()[i])) continue;
        keys.push_back(d.bandSteps()[i]);
        los.push_back(d.bandLo()[i]);
        his.push_back(d.bandHi()[i]);
    }
    s.bandLo->setData(keys, los);
    s.bandHi->setData(keys, his);
}

void LossCurvePanel::setSmoothing(double weight) {
    const double w = CurveSeries::clampSmoothing(weight);
    if (w == smoothing_) return;
    smoothing_ = w;
    for (Series& s : series_) {
        applySeriesStyle(s);
        s.data.setSmoothing(w);
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
    s.data.setBand(steps, lo, hi);
    redrawBand(s);
    if (followData_) fitAxes();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::setSeriesNote(const QString& method, const QString& note) {
    ensureSeries(method).note = note;
    updateLegendName(method);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::setEventMarkers(const QVector<EventMarker>& markers) {
    markers_->set(markers, [this](const QString& method) {
        return series_.contains(method) ? seriesPenOf(method).color() : methodColor(method);
    });
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

int LossCurvePanel::eventMarkerCount() const {
    return markers_->count();
}

QStringList LossCurvePanel::eventMarkerLabels() const {
    return markers_->labels();
}

QColor LossCurvePanel::eventMarkerColour(int i) const {
    return markers_->colour(i);
}

double LossCurvePanel::eventMarkerStep(int i) const {
    return markers_->step(i);
}

void LossCurvePanel::clear() {
    markers_->clear();
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
    if (hovering) crosshair_->setVisible(false);
    const bool ok = exportPlot(plot_, path, width, height, metric_);
    if (hovering) crosshair_->setVisible(true);
    return ok;
}

void LossCurvePanel::copyToClipboard(int width, int height) {
    if (width <= 0 || height <= 0) return;
    const bool hovering = crosshairVisible() && !crosshairPinned_;
    if (hovering) crosshair_->setVisible(false);
    const QImage image = plot_->toPixmap(width, height, 1.0).toImage();
    if (hovering) crosshair_->setVisible(true);
    QGuiApplication::clipboard()->setImage(image);
    plot_->replot(QCustomPlot::rpQueuedReplot);  // laid out for the widget again
}

bool LossCurvePanel::exportCsv(const QString& path) const {
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
        const QString name = CurveSeries::csvField(method);
        for (const CurveSeries::CsvRow& row : series_.constFind(method)->data.csvRows()) {
            out << name << ',' << CurveSeries::exactNumber(row.step) << ',' << row.value;
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
        const CurveSeries& s = series_.constFind(method)->data;
        const int i = s.nearestFinite(step);
        if (i < 0) {
            lines << method + QStringLiteral(": —");
            continue;
        }
        QString line = QStringLiteral("%1 @%2: %3")
                           .arg(method, QString::number(s.steps()[i], 'g', 10),
                                QString::number(s.values()[i], 'g', kReadoutDigits));
        if (smoothing_ > 0 && i < s.smoothed().size())
            line += tr(" (smoothed %1)").arg(QString::number(s.smoothed()[i], 'g', kReadoutDigits));
        lines << line;
    }
    return lines.join(QLatin1Char('\n'));
}

void LossCurvePanel::showCrosshairAt(double step) {
    if (!std::isfinite(step) || series_.isEmpty()) return;
    crosshairPinned_ = true;
    placeCrosshair(step);
    crosshair_->setVisible(true);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::hideCrosshair() {
    crosshairPinned_ = false;
    if (!crosshairVisible()) return;
    crosshair_->setVisible(false);
    crosshair_->replotOverlay();
}

bool LossCurvePanel::crosshairVisible() const {
    return crosshair_->visible();
}

QString LossCurvePanel::crosshairText() const {
    return crosshair_->text();
}

void LossCurvePanel::refreshCrosshair() {
    if (crosshairVisible()) placeCrosshair(crosshair_->step());
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
    crosshair_->setVisible(true);
    crosshair_->replotOverlay();
}

bool LossCurvePanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && event->type() == QEvent::Leave && !crosshairPinned_) hideCrosshair();
    return QWidget::eventFilter(watched, event);
}

// The readout at `step` beside the line (below the legend where they would overlap) and a dot on
// each method's drawn curve (its smoothed curve while smoothing is on).
void LossCurvePanel::placeCrosshair(double step) {
    QVector<CurveCrosshair::Dot> dots;
    for (const QString& method : std::as_const(order_)) {
        const Series& s = *series_.constFind(method);
        const int i = s.data.nearestFinite(step);
        CurveCrosshair::Dot dot;
        if (i >= 0) {
            dot.step = s.data.steps()[i];
            dot.value = s.smooth ? s.data.smoothed().value(i, kNaN) : s.data.values()[i];
            dot.colour = s.pen.color();
            dot.used = keep(dot.value);
        }
        dots << dot;
    }
    const bool inset = plot_->legend->visible() && !legendColumn_;
    crosshair_->place(step, readoutAt(step), dots, inset ? plot_->legend->outerRect() : QRect());
}

// ---- context menu ----------------------------------------------------------------------------

void LossCurvePanel::setForkOffer(bool offered, const QString& whyNot) {
    forkOffered_ = offered;
    forkWhyNot_ = whyNot;
}

QMenu* LossCurvePanel::createContextMenu(QWidget* parent, double step) {
    auto* menu = new QMenu(parent);
    menu->setToolTipsVisible(true);  // a disabled fork says why
    if (forkOffered_ && std::isfinite(step)) {
        const int at = std::max(0, static_cast<int>(std::lround(step)));
        QAction* fork = menu->addAction(tr("Fork from step %1…").arg(at), this,
                                        [this, at] { Q_EMIT forkRequested(at); });
        fork->setObjectName(QStringLiteral("forkFromStep"));
        fork->setEnabled(forkWhyNot_.isEmpty());
        fork->setToolTip(forkWhyNot_.isEmpty()
                             ? tr("A new run from the latest state this run kept at or before "
                                  "step %1, with the settings you change in the form")
                                   .arg(at)
                             : forkWhyNot_);
        menu->addSeparator();
    }
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
