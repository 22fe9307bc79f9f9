#include "sweep_panel.h"

#include <qcustomplot.h>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "log_axis_ticker.h"
#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

namespace {

// Error bars are stored as a plottable named "<method> ± sd" (kept out of the legend).
QString errorsName(const QString& method) {
    return method + QStringLiteral(" ± sd");
}

}  // namespace

SweepPanel::SweepPanel(QWidget* parent) : PlotPanel(parent) {
    plot_->setInteractions(QCP::iRangeZoom);
    plot_->setSelectionRectMode(QCP::srmZoom);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { rescale(); });
}

void SweepPanel::setAxes(const QString& xLabel, const QString& yLabel, bool logX, bool logY) {
    logX_ = logX;
    logY_ = logY;
    plot_->xAxis->setLabel(xLabel);
    plot_->yAxis->setLabel(yLabel);
    plot_->xAxis->setScaleType(logX ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    plot_->yAxis->setScaleType(logY ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (logY)
        plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new LogAxisTicker));
    else
        plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    updateTicks();
}

void SweepPanel::setCaption(const QString& caption) {
    if (caption.isEmpty()) {
        if (caption_) {
            plot_->plotLayout()->remove(caption_);
            plot_->plotLayout()->simplify();
            caption_ = nullptr;
        }
    } else if (!caption_) {
        plot_->plotLayout()->insertRow(plot_->plotLayout()->rowCount());
        QFont f = plot_->font();
        f.setPointSizeF(f.pointSizeF() * 0.9);
        caption_ = new QCPTextElement(plot_, caption, f);
        caption_->setTextColor(QColor(70, 70, 70));
        plot_->plotLayout()->addElement(plot_->plotLayout()->rowCount() - 1, 0, caption_);
    } else {
        caption_->setText(caption);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString SweepPanel::caption() const {
    return caption_ ? caption_->text() : QString();
}

void SweepPanel::addLine(const QString& method, const QVector<double>& x,
                         const QVector<double>& mean, const QVector<double>& sd) {
    const int n = std::min({x.size(), mean.size(), sd.size()});
    QVector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return x[a] < x[b]; });
    QVector<double> xs, ys, minus, plus;
    for (int i : order) {
        if (!std::isfinite(x[i]) || !std::isfinite(mean[i])) continue;
        if ((logX_ && x[i] <= 0) || (logY_ && mean[i] <= 0)) continue;
        const double s = std::isfinite(sd[i]) ? std::abs(sd[i]) : 0.0;
        xs.push_back(x[i]);
        ys.push_back(mean[i]);
        // On a log axis a bar cannot reach zero: it stops just above it.
        minus.push_back(logY_ ? std::min(s, 0.999 * mean[i]) : s);
        plus.push_back(s);
        if (!xValues_.contains(x[i])) xValues_.push_back(x[i]);
    }
    const QColor c = methodColor(method);
    QCPGraph* g = plot_->addGraph();
    g->setName(method);
    g->setPen(QPen(c, 2));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 7));
    g->setData(xs, ys, /*alreadySorted=*/true);
    auto* errors = new QCPErrorBars(plot_->xAxis, plot_->yAxis);
    errors->setName(errorsName(method));
    errors->removeFromLegend();
    errors->setDataPlottable(g);
    errors->setData(minus, plus);
    errors->setPen(QPen(c, 1.5));
    errors->setWhiskerWidth(8);
    updateTicks();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void SweepPanel::addReferenceLine(const QString& name, const QVector<double>& x,
                                  const QVector<double>& y) {
    QVector<QPair<double, double>> points;
    for (int i = 0; i < std::min(x.size(), y.size()); ++i) {
        if (!std::isfinite(x[i]) || !std::isfinite(y[i])) continue;
        if ((logX_ && x[i] <= 0) || (logY_ && y[i] <= 0)) continue;
        points.push_back({x[i], y[i]});
    }
    std::sort(points.begin(), points.end());
    QVector<double> xs, ys;
    for (const auto& [px, py] : points) {
        xs.push_back(px);
        ys.push_back(py);
        if (!xValues_.contains(px)) xValues_.push_back(px);
    }
    const QColor c(90, 90, 90);
    QCPGraph* g = plot_->addGraph();
    g->setName(name);
    g->setPen(QPen(c, 1.5, Qt::DashLine));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, c, c, 5));
    g->setData(xs, ys, /*alreadySorted=*/true);
    updateTicks();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void SweepPanel::updateTicks() {
    // Ticks at the swept values themselves: a batch sweep 2, 5, 20 reads as those numbers.
    QVector<double> ticks = xValues_;
    std::sort(ticks.begin(), ticks.end());
    if (ticks.isEmpty()) {
        plot_->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        return;
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (double t : ticks) ticker->addTick(t, QString::number(t, 'g', 6));
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->grid()->setSubGridVisible(false);
}

void SweepPanel::clear() {
    plot_->clearPlottables();
    xValues_.clear();
    updateTicks();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

int SweepPanel::seriesCount() const {
    return plot_->graphCount();
}

int SweepPanel::pointCount(const QString& method) const {
    for (int i = 0; i < plot_->graphCount(); ++i)
        if (plot_->graph(i)->name() == method) return plot_->graph(i)->dataCount();
    return 0;
}

double SweepPanel::errorAt(const QString& method, int i) const {
    for (int k = 0; k < plot_->plottableCount(); ++k) {
        auto* e = qobject_cast<QCPErrorBars*>(plot_->plottable(k));
        if (!e || e->name() != errorsName(method)) continue;
        if (i < 0 || i >= e->dataCount()) return -1;
        return e->data()->at(i).errorPlus;
    }
    return -1;
}

void SweepPanel::rescale() {
    plot_->rescaleAxes();
    // Make room for the error bars, which rescaleAxes does not count on every axis type.
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < plot_->plottableCount(); ++k) {
        auto* e = qobject_cast<QCPErrorBars*>(plot_->plottable(k));
        auto* g = e ? qobject_cast<QCPGraph*>(e->dataPlottable()) : nullptr;
        if (!g) continue;
        for (int i = 0; i < std::min(g->dataCount(), e->dataCount()); ++i) {
            const double y = g->data()->at(i)->value;
            lo = std::min(lo, y - e->data()->at(i).errorMinus);
            hi = std::max(hi, y + e->data()->at(i).errorPlus);
        }
    }
    if (std::isfinite(lo) && std::isfinite(hi)) {
        QCPRange r = plot_->yAxis->range();
        plot_->yAxis->setRange(std::min(r.lower, lo), std::max(r.upper, hi));
    }
    for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
        QCPRange r = axis->range();
        if (axis->scaleType() == QCPAxis::stLogarithmic)
            axis->setRange(r.lower / 1.3, r.upper * 1.3);
        else if (r.size() > 0)
            axis->setRange(r.lower - 0.08 * r.size(), r.upper + 0.08 * r.size());
        else
            axis->setRange(r.lower - 1, r.upper + 1);
    }
    placeLegend();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void SweepPanel::placeLegend() {
    // Where each line runs, in axis fractions (0…1, log where the axis is log): its points and
    // nine samples along each segment between them.
    auto fraction = [](const QCPAxis* axis, double v) {
        const QCPRange r = axis->range();
        if (axis->scaleType() == QCPAxis::stLogarithmic)
            return v > 0 ? std::log(v / r.lower) / std::log(r.upper / r.lower) : -1.0;
        return (v - r.lower) / r.size();
    };
    const Qt::Alignment corners[] = {Qt::AlignTop | Qt::AlignRight, Qt::AlignTop | Qt::AlignLeft,
                                     Qt::AlignBottom | Qt::AlignRight,
                                     Qt::AlignBottom | Qt::AlignLeft};
    int counts[4] = {0, 0, 0, 0};
    constexpr double kShare = 0.4;  // a corner: this share of the width and of the height
    auto count = [&](double fx, double fy) {
        for (int c = 0; c < 4; ++c) {
            const bool right = corners[c] & Qt::AlignRight, top = corners[c] & Qt::AlignTop;
            const bool inX = right ? fx > 1 - kShare : fx < kShare;
            const bool inY = top ? fy > 1 - kShare : fy < kShare;
            if (inX && inY) ++counts[c];
        }
    };
    for (int k = 0; k < plot_->graphCount(); ++k) {
        const auto* g = plot_->graph(k);
        for (int i = 0; i < g->dataCount(); ++i) {
            const double x1 = fraction(plot_->xAxis, g->data()->at(i)->key);
            const double y1 = fraction(plot_->yAxis, g->data()->at(i)->value);
            count(x1, y1);
            if (i + 1 == g->dataCount()) continue;
            const double x2 = fraction(plot_->xAxis, g->data()->at(i + 1)->key);
            const double y2 = fraction(plot_->yAxis, g->data()->at(i + 1)->value);
            for (int s = 1; s < 10; ++s)
                count(x1 + (x2 - x1) * s / 10.0, y1 + (y2 - y1) * s / 10.0);
        }
    }
    int best = 0;
    for (int c = 1; c < 4; ++c)
        if (counts[c] < counts[best]) best = c;
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, corners[best]);
}

Qt::Alignment SweepPanel::legendCorner() const {
    return plot_->axisRect()->insetLayout()->insetAlignment(0);
}

}  // namespace liftlab
