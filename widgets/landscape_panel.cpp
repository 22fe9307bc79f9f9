#include "landscape_panel.h"

#include <qcustomplot.h>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "log_axis_ticker.h"
#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

// The iso-loss lines of one side: a plottable that draws a list of segments (one object for
// thousands of segments, which QCPCurve per segment could not afford).
class ContourLines : public QCPAbstractPlottable {
public:
    ContourLines(QCPAxis* keyAxis, QCPAxis* valueAxis) : QCPAbstractPlottable(keyAxis, valueAxis) {
        setSelectable(QCP::stNone);
    }
    void setSegments(QVector<ContourSegment> segments) { segments_ = std::move(segments); }
    int segmentCount() const { return segments_.size(); }

    double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }
    QCPRange getKeyRange(bool& found, QCP::SignDomain domain) const override {
        return range(true, found, domain);
    }
    QCPRange getValueRange(bool& found, QCP::SignDomain domain, const QCPRange&) const override {
        return range(false, found, domain);
    }

protected:
    void draw(QCPPainter* painter) override {
        if (segments_.isEmpty() || !keyAxis() || !valueAxis()) return;
        QVector<QLineF> lines;
        lines.reserve(segments_.size());
        for (const ContourSegment& s : segments_)
            lines.push_back(QLineF(coordsToPixels(s.x1, s.y1), coordsToPixels(s.x2, s.y2)));
        applyDefaultAntialiasingHint(painter);
        painter->setPen(mPen);
        painter->setBrush(Qt::NoBrush);
        painter->drawLines(lines);
    }
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override {
        painter->setPen(mPen);
        painter->drawLine(QLineF(rect.left(), rect.center().y(), rect.right(), rect.center().y()));
    }

private:
    QCPRange range(bool keys, bool& found, QCP::SignDomain domain) const {
        QCPRange r;
        found = false;
        for (const ContourSegment& s : segments_) {
            for (const double v : {keys ? s.x1 : s.y1, keys ? s.x2 : s.y2}) {
                if ((domain == QCP::sdPositive && v <= 0) || (domain == QCP::sdNegative && v >= 0))
                    continue;
                if (!found) r = QCPRange(v, v);
                r.expand(v);
                found = true;
            }
        }
        return r;
    }

    QVector<ContourSegment> segments_;
};

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kLegendRowMax = 10;        // legend entries in a single row
constexpr double kTrajectoryPad = 0.04;  // share of the span left around a path off the grid
const QColor kContourColor(45, 45, 45, 150);
const QColor kNanColor(212, 212, 212);
const QColor kKeyColor(90, 90, 90);
const QColor kCasingColor(25, 25, 25, 190);  // a dark edge along each path: any colour reads

QColor mixWithWhite(const QColor& c, double white) {
    return QColor::fromRgbF(c.redF() + (1 - c.redF()) * white,
                            c.greenF() + (1 - c.greenF()) * white,
                            c.blueF() + (1 - c.blueF()) * white);
}

// Viridis (perceptually uniform, low = violet, high = yellow), washed towards white so the
// dark contours and the saturated method colours of the paths stay readable on top of it.
QCPColorGradient landscapeGradient() {
    static const QRgb kViridis[] = {0x440154, 0x482878, 0x3e4989, 0x31688e, 0x26828e,
                                    0x1f9e89, 0x35b779, 0x6ece58, 0xb5de2b, 0xfde725};
    constexpr int n = sizeof(kViridis) / sizeof(kViridis[0]);
    QCPColorGradient g;
    g.clearColorStops();
    for (int i = 0; i < n; ++i)
        g.setColorStopAt(double(i) / (n - 1), mixWithWhite(QColor(kViridis[i]), 0.5));
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setNanHandling(QCPColorGradient::nhNanColor);
    g.setNanColor(kNanColor);
    return g;
}

// Marker shapes as QCPScatterStyle custom paths (drawn scaled by size / 6).
QPainterPath starPath() {
    QPainterPath path;
    for (int i = 0; i < 10; ++i) {
        const double r = i % 2 == 0 ? 3.4 : 1.4;
        const double a = -kPi / 2 + i * kPi / 5;
        const QPointF p(r * std::cos(a), r * std::sin(a));
        if (i == 0)
            path.moveTo(p);
        else
            path.lineTo(p);
    }
    path.closeSubpath();
    return path;
}

QPainterPath crossPath() {
    // A plus sign of arms 3 long and 0.9 wide, turned by 45°: an ×.
    const double w = 0.45, l = 3.0;
    QPolygonF plus;
    plus << QPointF(-w, -l) << QPointF(w, -l) << QPointF(w, -w) << QPointF(l, -w) << QPointF(l, w)
         << QPointF(w, w) << QPointF(w, l) << QPointF(-w, l) << QPointF(-w, w) << QPointF(-l, w)
         << QPointF(-l, -w) << QPointF(-w, -w);
    QPainterPath path;
    path.addPolygon(QTransform().rotate(45).map(plus));
    path.closeSubpath();
    return path;
}

QPen cosmeticPen(const QColor& c, double width) {
    QPen pen(c, width);
    pen.setCosmetic(true);  // custom scatter paths are scaled; the outline should not be
    pen.setJoinStyle(Qt::MiterJoin);
    return pen;
}

QCPScatterStyle startStyle(const QColor& c) {
    return QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(c.darker(130), 2.2), Qt::white, 9);
}
QCPScatterStyle endStyle(const QColor& c) {
    return QCPScatterStyle(starPath(), cosmeticPen(QColor(40, 40, 40), 1.0), c, 15);
}
QCPScatterStyle nowStyle(const QColor& c) {
    return QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(25, 25, 25), 1.4), c, 11);
}
QCPScatterStyle minimumStyle() {
    return QCPScatterStyle(crossPath(), cosmeticPen(Qt::white, 1.0), QColor(25, 25, 25), 11);
}

QCPGraph* markerGraph(QCPAxisRect* rect, const QCPScatterStyle& style) {
    auto* g = new QCPGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(style);
    g->setPen(style.pen());
    g->setSelectable(QCP::stNone);
    return g;
}

void setPoint(QCPGraph* g, double x, double y) {
    g->data()->clear();
    if (std::isfinite(x) && std::isfinite(y)) g->addData(x, y);
}

}  // namespace

LandscapePanel::LandscapePanel(QWidget* parent) : PlotPanel(parent, QSize(480, 260)) {
    plot_->setAutoAddPlottableToLegend(false);

    // Items made while the layout holds no axis rect at (0, 0) would warn: make them first.
    for (SideView& v : sides_) v.note = new QCPItemText(plot_);

    // The default axis rect becomes the θ side; the legend leaves it for a row under both sides.
    QCPLayoutGrid* main = plot_->plotLayout();
    QCPAxisRect* first = plot_->axisRect();
    first->insetLayout()->take(plot_->legend);
    main->take(first);
    main->simplify();
    margins_ = new QCPMarginGroup(plot_);
    sidesRow_ = new QCPLayoutGrid;
    main->addElement(0, 0, sidesRow_);
    auto* legendRow = new QCPLayoutGrid;
    main->addElement(1, 0, legendRow);
    main->setRowStretchFactor(1, 0.001);
    legendRow->addElement(0, 0, new QCPLayoutElement(plot_));
    legendRow->addElement(0, 1, plot_->legend);
    legendRow->addElement(0, 2, new QCPLayoutElement(plot_));
    legendRow->setColumnStretchFactors({1, 0.001, 1});
    legendRow->setMargins(QMargins(0, 0, 0, 4));
    plot_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot_->legend->setVisible(false);

    sides_[Theta].rect = first;
    sides_[Lifted].rect = new QCPAxisRect(plot_);
    setupSide(Theta);
    setupSide(Lifted);
    setSideTitle(Theta, tr("θ-space (ICNN weights: θ, then the free tensors)"));
    setSideTitle(Lifted, tr("lifted space (φ, b)"));
    setAxisLabels(tr("α"), tr("β"));

    QCPAxisRect* theta = sides_[Theta].rect;
    keyStart_ = markerGraph(theta, startStyle(kKeyColor));
    keyStart_->setName(tr("start"));
    keyEnd_ = markerGraph(theta, endStyle(kKeyColor));
    keyEnd_->setName(tr("end"));
    keyNow_ = markerGraph(theta, nowStyle(kKeyColor));
    keyMinimum_ = markerGraph(theta, minimumStyle());
    keyMinimum_->setName(tr("grid minimum"));

    layoutSides();
    updateColors();
    updateTimeline();
    for (Side s : {Theta, Lifted}) {
        fitAxes(s);
        updateNote(s);
    }

    // Left drag zooms into a rectangle of the side it starts on, the wheel zooms, a
    // double-click shows the grids again.
    plot_->setInteractions(QCP::iRangeZoom);
    plot_->setSelectionRectMode(QCP::srmZoom);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] {
        fitAxes(Theta);
        fitAxes(Lifted);
        plot_->replot(QCustomPlot::rpQueuedReplot);
    });
}

void LandscapePanel::setupSide(Side side) {
    SideView& v = sides_[side];
    QCPAxisRect* rect = v.rect;
    if (side != Theta) {
        // The θ rect got this from applyLabStyle: a closed box with the labels left and below.
        rect->setupFullAxesBox(true);
        for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
            axis->grid()->setSubGridVisible(true);
            axis->grid()->setPen(plot_->xAxis->grid()->pen());
            axis->grid()->setSubGridPen(plot_->xAxis->grid()->subGridPen());
        }
    }
    v.grid = new QCPLayoutGrid;
    QFont font = plot_->font();
    font.setPointSizeF(font.pointSizeF() * 1.05);
    v.title = new QCPTextElement(plot_, QString(), font);
    v.scale = new QCPColorScale(plot_);
    v.scale->setType(QCPAxis::atRight);
    v.scale->setBarWidth(12);
    v.scale->setLabel(tr("loss"));
    v.scale->setGradient(landscapeGradient());
    v.scale->axis()->setPadding(4);
    v.grid->addElement(0, 0, v.title);
    // No empty cell: QCustomPlot 2.1 dereferences empty cells when the grid joins the plot.
    v.grid->addElement(0, 1, new QCPLayoutElement(plot_));
    v.grid->addElement(1, 0, rect);
    v.grid->addElement(1, 1, v.scale);
    v.grid->setColumnSpacing(8);
    v.grid->setColumnStretchFactor(1, 0.001);

    QCPAxis* x = rect->axis(QCPAxis::atBottom);
    QCPAxis* y = rect->axis(QCPAxis::atLeft);
    v.map = new QCPColorMap(x, y);
    v.map->setColorScale(v.scale);
    v.map->setInterpolate(true);
    v.map->setTightBoundary(false);  // cells are centred on the grid points
    v.map->setSelectable(QCP::stNone);
    v.map->data()->clear();  // a new QCPColorMap holds a 10 × 10 grid of zeros
    v.contours = new ContourLines(x, y);
    v.contours->setPen(QPen(kContourColor, 0.9));
    v.minimum = markerGraph(rect, minimumStyle());

    v.note->setLayer(QStringLiteral("axes"));  // above a heatmap
    v.note->setClipAxisRect(rect);
    v.note->position->setType(QCPItemPosition::ptAxisRectRatio);
    v.note->position->setAxisRect(rect);
    v.note->position->setCoords(0.5, 0.5);
    v.note->setColor(QColor(120, 120, 120));
    v.note->setBrush(Qt::white);  // readable over the grid lines
    v.note->setPadding(QMargins(6, 3, 6, 3));
    v.note->setSelectable(false);
}

void LandscapePanel::setSideTitle(Side side, const QString& title) {
    sides_[side].title->setText(title);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LandscapePanel::setGrid(Side side, int nAlpha, int nBeta, double a0, double a1, double b0,
                             double b1, const QVector<double>& loss) {
    SideView& v = sides_[side];
    v.problem.clear();
    if (nAlpha < 2 || nBeta < 2)
        v.problem = tr("grid needs at least 2 × 2 points (got %1 × %2)").arg(nAlpha).arg(nBeta);
    else if (loss.size() != static_cast<qsizetype>(nAlpha) * nBeta)
        v.problem =
            tr("grid of %1 × %2 points but %3 loss values").arg(nAlpha).arg(nBeta).arg(loss.size());
    else if (!std::isfinite(a0) || !std::isfinite(a1) || !std::isfinite(b0) || !std::isfinite(b1) ||
             !(a0 < a1) || !(b0 < b1))
        v.problem = tr("grid range must be finite and increasing");
    v.hasGrid = v.problem.isEmpty();
    v.map->data()->clear();
    v.minimum->data()->clear();
    if (v.hasGrid) {
        v.nAlpha = nAlpha;
        v.nBeta = nBeta;
        v.a0 = a0;
        v.a1 = a1;
        v.b0 = b0;
        v.b1 = b1;
        v.loss = loss;
        for (double& l : v.loss)
            if (!std::isfinite(l)) l = kNaN;  // ±inf would be a colour; it is an invalid cell
        v.map->data()->setSize(nAlpha, nBeta);
        v.map->data()->setRange(QCPRange(a0, a1), QCPRange(b0, b1));
        int best = -1;
        for (int ib = 0; ib < nBeta; ++ib) {
            for (int ia = 0; ia < nAlpha; ++ia) {
                const int i = ib * nAlpha + ia;
                v.map->data()->setCell(ia, ib, v.loss[i]);
                if (std::isfinite(v.loss[i]) && (best < 0 || v.loss[i] < v.loss[best])) best = i;
            }
        }
        if (best >= 0) {
            setPoint(v.minimum, a0 + (a1 - a0) * (best % nAlpha) / (nAlpha - 1),
                     b0 + (b1 - b0) * (best / nAlpha) / (nBeta - 1));
        } else {
            v.problem = tr("no finite loss value on the grid");
        }
    } else {
        v.loss.clear();
    }
    updateColors();
    updateContours(Theta);
    updateContours(Lifted);
    fitAxes(side);
    updateNote(side);
    updateLegend();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool LandscapePanel::finiteRange(Side side, double* lo, double* hi) const {
    const SideView& v = sides_[side];
    *lo = std::numeric_limits<double>::infinity();
    *hi = -*lo;
    if (!v.hasGrid) return false;
    for (const double l : v.loss) {
        if (!std::isfinite(l)) continue;
        *lo = std::min(*lo, l);
        *hi = std::max(*hi, l);
    }
    return *lo <= *hi;
}

void LandscapePanel::updateColors() {
    double lo[2], hi[2];
    bool has[2];
    for (Side s : {Theta, Lifted}) has[s] = finiteRange(s, &lo[s], &hi[s]);
    if (sharedRange_ && has[Theta] && has[Lifted]) {
        lo[Theta] = lo[Lifted] = std::min(lo[Theta], lo[Lifted]);
        hi[Theta] = hi[Lifted] = std::max(hi[Theta], hi[Lifted]);
    }
    for (Side s : {Theta, Lifted}) {
        QCPColorScale* scale = sides_[s].scale;
        scale->setVisible(has[s]);
        if (!has[s]) continue;
        const bool log = logRequested_ && lo[s] > 0;
        QCPRange range(lo[s], hi[s]);
        if (!(hi[s] > lo[s]))  // a flat grid still needs a range to colour
            range = log ? QCPRange(lo[s] / 1.5, hi[s] * 1.5) : QCPRange(lo[s] - 0.5, hi[s] + 0.5);
        scale->setDataScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        QCPAxis* axis = scale->axis();
        if (log) {
            axis->setTicker(QSharedPointer<LogAxisTicker>::create());
            axis->setNumberFormat(QStringLiteral("eb"));  // 10⁻² style labels
            axis->setNumberPrecision(0);
        } else {
            axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
            axis->setNumberFormat(QStringLiteral("gbd"));
            axis->setNumberPrecision(4);
        }
        scale->setDataRange(range);
    }
}

void LandscapePanel::updateContours(Side side) {
    SideView& v = sides_[side];
    QVector<ContourSegment> segments;
    if (v.hasGrid && contourCount_ > 0) {
        for (const double level : contourLevels(v.loss, contourCount_, logColor(side)))
            segments += contourSegments(v.loss, v.nAlpha, v.nBeta, v.a0, v.a1, v.b0, v.b1, level);
    }
    v.contours->setSegments(std::move(segments));
}

void LandscapePanel::setLogColor(bool on) {
    logRequested_ = on;
    updateColors();
    updateContours(Theta);
    updateContours(Lifted);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LandscapePanel::setSharedColorRange(bool on) {
    sharedRange_ = on;
    updateColors();
    updateContours(Theta);
    updateContours(Lifted);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LandscapePanel::setContourCount(int count) {
    contourCount_ = std::max(0, count);
    updateContours(Theta);
    updateContours(Lifted);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LandscapePanel::removeTrajectory(Trajectory& t) {
    for (QCPAbstractPlottable* p :
         std::initializer_list<QCPAbstractPlottable*>{t.halo, t.line, t.start, t.now, t.end})
        if (p) plot_->removePlottable(p);
    t = Trajectory();
}

void LandscapePanel::addTrajectory(Side side, const QString& method, const QVector<double>& steps,
                                   const QVector<double>& alpha, const QVector<double>& beta) {
    SideView& v = sides_[side];
    int at = -1;
    for (int i = 0; i < v.trajectories.size(); ++i) {
        if (v.trajectories[i].method != method) continue;
        removeTrajectory(v.trajectories[i]);
        at = i;
    }
    Trajectory t;
    t.method = method;
    const int n = std::min({steps.size(), alpha.size(), beta.size()});
    QVector<int> order;
    for (int i = 0; i < n; ++i)
        if (std::isfinite(steps[i]) && std::isfinite(alpha[i]) && std::isfinite(beta[i]))
            order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return steps[a] < steps[b]; });
    QVector<double> index;
    for (const int i : order) {
        index.push_back(t.steps.size());
        t.steps.push_back(steps[i]);
        t.alpha.push_back(alpha[i]);
        t.beta.push_back(beta[i]);
    }

    const QColor color = methodColor(method);
    QCPAxis* x = v.rect->axis(QCPAxis::atBottom);
    QCPAxis* y = v.rect->axis(QCPAxis::atLeft);
    t.halo = new QCPCurve(x, y);
    t.halo->setPen(QPen(kCasingColor, 4.4, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    t.line = new QCPCurve(x, y);
    t.line->setPen(QPen(color, 2.4, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    t.line->setName(method);
    for (QCPCurve* c : {t.halo, t.line}) {
        c->setData(index, t.alpha, t.beta, /*alreadySorted=*/true);
        c->setSelectable(QCP::stNone);
    }
    t.start = markerGraph(v.rect, startStyle(color));
    t.now = markerGraph(v.rect, nowStyle(color));  // under the end star: at the end it hides
    t.end = markerGraph(v.rect, endStyle(color));
    if (!t.steps.isEmpty()) {
        setPoint(t.start, t.alpha.front(), t.beta.front());
        setPoint(t.end, t.alpha.back(), t.beta.back());
    }
    if (at >= 0)
        v.trajectories[at] = t;
    else
        v.trajectories.push_back(t);
    if (!methods_.contains(method)) methods_.push_back(method);

    updateTimeline();
    fitAxes(side);
    updateNote(side);
    updateLegend();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LandscapePanel::setTimelineStep(double step) {
    timelineStep_ = std::isfinite(step) ? step : -1;
    updateTimeline();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LandscapePanel::updateTimeline() {
    for (SideView& v : sides_) {
        for (Trajectory& t : v.trajectories) {
            int shown = -1;
            for (int i = 0; i < t.steps.size(); ++i)
                if (timelineStep_ < 0 || t.steps[i] <= timelineStep_) shown = i;
            if (shown >= 0)
                setPoint(t.now, t.alpha[shown], t.beta[shown]);
            else
                t.now->data()->clear();
        }
    }
    keyNow_->setName(timelineStep_ < 0
                         ? tr("last step")
                         : tr("step %1").arg(QString::number(timelineStep_, 'g', 10)));
}

void LandscapePanel::updateLegend() {
    QList<QCPAbstractPlottable*> entries;
    for (const QString& method : std::as_const(methods_)) {
        for (const SideView& v : sides_) {
            const auto it = std::find_if(v.trajectories.cbegin(), v.trajectories.cend(),
                                         [&](const Trajectory& t) { return t.method == method; });
            if (it == v.trajectories.cend()) continue;
            entries << it->line;  // the first side that has the method speaks for both
            break;
        }
    }
    if (!entries.isEmpty()) entries << keyStart_ << keyEnd_ << keyNow_;
    if (std::any_of(sides_.cbegin(), sides_.cend(), [](const SideView& v) { return v.hasGrid; }))
        entries << keyMinimum_;

    QCPLegend* legend = plot_->legend;
    legend->clearItems();
    // One row below the plots; a long list splits into two rows of about equal length. The wrap
    // applies to items added after it is set.
    const int n = entries.size();
    legend->setWrap(n > kLegendRowMax ? (n + 1) / 2 : 0);
    for (QCPAbstractPlottable* p : entries) p->addToLegend(legend);
    legend->setVisible(n > 0);
}

void LandscapePanel::setEmptyReason(const QString& reason) {
    emptyReason_ = reason;
    for (Side side : {Theta, Lifted}) updateNote(side);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool LandscapePanel::hasData() const {
    for (const SideView& v : sides_)
        if (v.hasGrid || !v.trajectories.isEmpty()) return true;
    return false;
}

void LandscapePanel::updateNote(Side side) {
    SideView& v = sides_[side];
    const bool empty = !v.hasGrid && v.trajectories.isEmpty();
    const QString idle = emptyReason_.isEmpty() ? tr("no landscape yet") : emptyReason_;
    v.note->setText(v.problem.isEmpty() ? idle : v.problem);
    v.note->setVisible(v.visible && (empty || !v.problem.isEmpty()));
}

void LandscapePanel::fitAxes(Side side) {
    const SideView& v = sides_[side];
    // The grid's cells, half a spacing beyond the outer grid points (the heatmap's extent).
    bool grid = v.hasGrid;
    QCPRange gx, gy;
    if (grid) {
        const double da = (v.a1 - v.a0) / (v.nAlpha - 1), db = (v.b1 - v.b0) / (v.nBeta - 1);
        gx = QCPRange(v.a0 - da / 2, v.a1 + da / 2);
        gy = QCPRange(v.b0 - db / 2, v.b1 + db / 2);
    }
    bool path = false;
    QCPRange px, py;
    for (const Trajectory& t : v.trajectories) {
        for (int i = 0; i < t.steps.size(); ++i) {
            if (!path) {
                px = QCPRange(t.alpha[i], t.alpha[i]);
                py = QCPRange(t.beta[i], t.beta[i]);
            }
            px.expand(t.alpha[i]);
            py.expand(t.beta[i]);
            path = true;
        }
    }
    auto fit = [&](QCPRange g, QCPRange p) {
        if (!grid && !path) return QCPRange(-1, 1);
        QCPRange all = grid ? g : p;
        if (path) all.expand(p);
        const double pad =
            std::max(kTrajectoryPad * all.size(), 1e-3 * std::max(1.0, std::abs(all.center())));
        if (!grid) return QCPRange(p.lower - pad, p.upper + pad);
        // Pad only where a path leaves the grid; elsewhere the heatmap fills the box.
        if (path && p.lower < g.lower) g.lower = p.lower - pad;
        if (path && p.upper > g.upper) g.upper = p.upper + pad;
        return g;
    };
    v.rect->axis(QCPAxis::atBottom)->setRange(fit(gx, px));
    v.rect->axis(QCPAxis::atLeft)->setRange(fit(gy, py));
}

void LandscapePanel::setSideVisible(Side side, bool visible) {
    sides_[side].visible = visible;
    layoutSides();
    updateNote(Theta);
    updateNote(Lifted);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LandscapePanel::layoutSides() {
    for (SideView& v : sides_) {
        if (!v.inLayout) continue;
        sidesRow_->take(v.grid);
        v.inLayout = false;
    }
    sidesRow_->simplify();
    int column = 0;
    for (SideView& v : sides_) {
        // A side out of the layout is hidden with everything on it (axes, heatmap, paths).
        v.grid->setVisible(v.visible);
        QCPMarginGroup* group = v.visible ? margins_ : nullptr;
        v.rect->setMarginGroup(QCP::msTop | QCP::msBottom, group);
        v.scale->setMarginGroup(QCP::msTop | QCP::msBottom, group);
        if (!v.visible) continue;
        sidesRow_->addElement(0, column++, v.grid);
        v.inLayout = true;
    }
}

void LandscapePanel::setAxisLabels(const QString& alphaLabel, const QString& betaLabel) {
    for (SideView& v : sides_) {
        v.rect->axis(QCPAxis::atBottom)->setLabel(alphaLabel);
        v.rect->axis(QCPAxis::atLeft)->setLabel(betaLabel);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LandscapePanel::clear() {
    for (SideView& v : sides_) {
        for (Trajectory& t : v.trajectories) removeTrajectory(t);
        v.trajectories.clear();
        v.hasGrid = false;
        v.loss.clear();
        v.problem.clear();
        v.map->data()->clear();
        v.minimum->data()->clear();
    }
    methods_.clear();
    updateColors();
    for (Side s : {Theta, Lifted}) {
        updateContours(s);
        fitAxes(s);
        updateNote(s);
    }
    updateLegend();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool LandscapePanel::hasGrid(Side side) const {
    return sides_[side].hasGrid;
}

int LandscapePanel::trajectoryCount(Side side) const {
    return sides_[side].trajectories.size();
}

int LandscapePanel::contourSegmentCount(Side side) const {
    return sides_[side].contours->segmentCount();
}

bool LandscapePanel::sideVisible(Side side) const {
    return sides_[side].visible;
}

bool LandscapePanel::logColor(Side side) const {
    const SideView& v = sides_[side];
    return v.hasGrid && v.scale->dataScaleType() == QCPAxis::stLogarithmic;
}

QPointF LandscapePanel::timelineMarker(Side side, const QString& method) const {
    for (const Trajectory& t : sides_[side].trajectories) {
        if (t.method != method || t.now->data()->isEmpty()) continue;
        const auto p = t.now->data()->constBegin();
        return QPointF(p->key, p->value);
    }
    return QPointF(kNaN, kNaN);
}

QPointF LandscapePanel::gridMinimum(Side side) const {
    const QCPGraph* g = sides_[side].minimum;
    if (g->data()->isEmpty()) return QPointF(kNaN, kNaN);
    return QPointF(g->data()->constBegin()->key, g->data()->constBegin()->value);
}

QCPAxisRect* LandscapePanel::axisRect(Side side) const {
    return sides_[side].rect;
}

QCPColorScale* LandscapePanel::colorScale(Side side) const {
    return sides_[side].scale;
}

bool LandscapePanel::exportTo(const QString& path, int width, int height) {
    return exportPlot(plot_, path, width, height, tr("loss landscape"));
}

}  // namespace liftlab
