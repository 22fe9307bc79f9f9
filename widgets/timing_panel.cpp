#include "timing_panel.h"

#include <qcustomplot.h>
#include <algorithm>
#include <cmath>

namespace liftlab {

namespace {
constexpr double kBarWidth = 0.6;  // in category units
}

TimingPanel::TimingPanel(QWidget* parent) : PlotPanel(parent) {
    plot_->xAxis->grid()->setVisible(false);
    plot_->yAxis->setLabel(tr("ms per step"));
    rest_ = new QCPBars(plot_->xAxis, plot_->yAxis);
    rest_->setName(tr("gradient step (forward, backward, optimizer)"));
    rest_->setWidth(kBarWidth);
    rest_->setBrush(QColor(150, 170, 200));
    rest_->setPen(Qt::NoPen);
    solve_ = new QCPBars(plot_->xAxis, plot_->yAxis);
    solve_->setName(tr("closed-form solve"));
    solve_->setWidth(kBarWidth);
    solve_->moveAbove(rest_);
    solve_->setBrush(QColor(60, 60, 60, 200));
    solve_->setPen(Qt::NoPen);
    // An invisible bar at each total carries the error bars (a stacked bar reports its own
    // height, not the stack's).
    total_ = new QCPBars(plot_->xAxis, plot_->yAxis);
    total_->setWidth(kBarWidth);
    total_->setPen(Qt::NoPen);
    total_->setBrush(Qt::NoBrush);
    total_->removeFromLegend();
    error_ = new QCPErrorBars(plot_->xAxis, plot_->yAxis);
    error_->removeFromLegend();
    error_->setPen(QPen(QColor(40, 40, 40), 1.2));
    error_->setSymbolGap(0);  // one whisker through the top of the bar
    error_->setDataPlottable(total_);
    plot_->legend->setVisible(true);
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    setEmptyNote(tr("No timing recorded"));
    redraw();
}

void TimingPanel::setCost(const QString& method, double msPerStep, double sdMs,
                          double solveFraction) {
    if (!std::isfinite(msPerStep) || msPerStep < 0) return;
    const double fraction = std::isfinite(solveFraction) ? std::clamp(solveFraction, 0.0, 1.0) : 0;
    Row row{method, msPerStep, std::isfinite(sdMs) ? sdMs : -1, fraction * msPerStep};
    auto it =
        std::find_if(rows_.begin(), rows_.end(), [&](const Row& r) { return r.method == method; });
    if (it != rows_.end())
        *it = row;
    else
        rows_.push_back(row);
    redraw();
}

void TimingPanel::clear() {
    rows_.clear();
    redraw();
}

double TimingPanel::solveMs(const QString& method) const {
    for (const auto& r : rows_)
        if (r.method == method) return r.solve;
    return NAN;
}

void TimingPanel::redraw() {
    QVector<double> keys, rest, solve, totals, errors;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double top = 0;
    bool anySolve = false;
    for (int i = 0; i < rows_.size(); ++i) {
        const Row& r = rows_[i];
        keys << i;
        rest << r.ms - r.solve;
        solve << r.solve;
        totals << r.ms;
        errors << std::max(r.sd, 0.0);
        ticker->addTick(i, r.method);
        top = std::max(top, r.ms + std::max(r.sd, 0.0));
        anySolve = anySolve || r.solve > 0;
    }
    // The solve's legend entry only where some method has one (not for ICNN or SGD-only runs).
    if (anySolve)
        solve_->addToLegend();
    else
        solve_->removeFromLegend();
    rest_->setData(keys, rest, /*alreadySorted=*/true);
    solve_->setData(keys, solve, /*alreadySorted=*/true);
    total_->setData(keys, totals, /*alreadySorted=*/true);
    error_->setDataPlottable(total_);
    error_->setData(errors);
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setRange(-0.6, std::max<double>(rows_.size(), 1) - 0.4);
    plot_->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
    setEmptyNote(rows_.isEmpty() ? tr("No timing recorded") : QString());
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace liftlab
