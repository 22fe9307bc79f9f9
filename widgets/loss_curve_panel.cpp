#include "loss_curve_panel.h"

#include <qcustomplot.h>
#include <QVBoxLayout>
#include <cmath>
#include <iterator>

#include "log_axis_ticker.h"
#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

namespace {

constexpr double kLogMargin = 1.15;     // multiplicative head-room above/below the data on log y
constexpr double kLinearMargin = 0.05;  // share of the range added on linear y
constexpr int kBandAlpha = 45;          // bands stay behind the curves and do not hide them
const QString kBandLayer = QStringLiteral("bands");
constexpr double kSnapToZeroShare = 0.15;  // x starts at 0 if the data starts this close to it
constexpr int kInsetLegendMax = 6;  // more entries than this would cover the curves: move aside

}  // namespace

LossCurvePanel::LossCurvePanel(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    setMinimumSize(320, 240);

    applyLabStyle(plot_);
    plot_->addLayer(kBandLayer, plot_->layer(QStringLiteral("main")), QCustomPlot::limBelow);
    plot_->xAxis->setLabel(tr("step"));
    plot_->legend->setVisible(false);  // shown with the first series

    // Left drag zooms into a rectangle, the wheel zooms, a double-click shows everything again.
    plot_->setInteractions(QCP::iRangeZoom);
    plot_->setSelectionRectMode(QCP::srmZoom);
    connect(plot_, &QCustomPlot::mouseWheel, this, [this] { onUserZoom(); });
    connect(plot_->selectionRect(), &QCPSelectionRect::accepted, this, [this] { onUserZoom(); });
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { rescale(); });

    setLogY(true);
}

void LossCurvePanel::setMetric(const QString& name) {
    metric_ = name;
    QString label = name;
    plot_->yAxis->setLabel(label.replace(QLatin1Char('_'), QLatin1Char(' ')));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::setLogY(bool on) {
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
    if (followData_) fitAxes();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::setTitle(const QString& title) {
    setPlotTitle(plot_, title_, title);
}

LossCurvePanel::Series& LossCurvePanel::ensureSeries(const QString& method) {
    auto it = series_.find(method);
    if (it != series_.end()) return *it;
    Series s;
    s.graph = plot_->addGraph();
    s.graph->setName(method);
    s.graph->setPen(seriesPen(method));
    // Log points are sparse: a small marker keeps a lone first point visible.
    s.graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    s.graph->setLineStyle(QCPGraph::lsLine);
    auto& inserted = *series_.insert(method, s);
    plot_->legend->setVisible(true);
    placeLegend();
    return inserted;
}

// Members of a sweep ("cf-prox@batch_size=8") share their method's colour family; the n-th
// sweep value seen gets the n-th shade and dash pattern, so the members stay apart.
QPen LossCurvePanel::seriesPen(const QString& method) {
    const int at = method.indexOf(QLatin1Char('@'));
    if (at < 0) return QPen(methodColor(method), 2.0);
    const QString suffix = method.mid(at);
    int index = sweepSuffixes_.indexOf(suffix);
    if (index < 0) {
        sweepSuffixes_ << suffix;
        index = sweepSuffixes_.size() - 1;
    }
    static const int kShade[] = {150, 100, 70, 125, 55};  // >100 darker, <100 lighter
    static const Qt::PenStyle kStyle[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                          Qt::DashDotDotLine};
    const int n = static_cast<int>(std::size(kShade));
    const int shade = kShade[index % n];
    QColor color = methodColor(method.left(at));
    color = shade >= 100 ? color.darker(shade) : color.lighter(100 * 100 / shade);
    QPen pen(color, 2.0);
    pen.setStyle(kStyle[(index / n + index) % n]);
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
        grid->addElement(title_ ? 1 : 0, 1, legendColumn_);
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
    s.graph->setName(s.note.isEmpty() ? method : method + QStringLiteral(" — ") + s.note);
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
        if (!keep(values[i]) || !std::isfinite(steps[i])) continue;
        keys.push_back(steps[i]);
        vals.push_back(values[i]);
    }
    // New steps after the existing ones are appended without touching the old data.
    if (!keys.isEmpty()) s.graph->addData(keys, vals);
    if (followData_) fitAxes();
    plot_->replot(QCustomPlot::rpQueuedReplot);
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
    QVector<double> keys, los, his;
    for (int i = 0; i < n; ++i) {
        if (!std::isfinite(steps[i]) || !keep(lo[i]) || !keep(hi[i])) continue;
        keys.push_back(steps[i]);
        los.push_back(lo[i]);
        his.push_back(hi[i]);
    }
    s.bandLo->setData(keys, los, /*alreadySorted=*/true);
    s.bandHi->setData(keys, his, /*alreadySorted=*/true);
    if (followData_) fitAxes();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::setSeriesNote(const QString& method, const QString& note) {
    ensureSeries(method).note = note;
    updateLegendName(method);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePanel::clear() {
    plot_->clearGraphs();
    series_.clear();
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
    return exportPlot(plot_, path, width, height, metric_);
}

}  // namespace liftlab
