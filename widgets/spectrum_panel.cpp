#include "spectrum_panel.h"

#include <qcustomplot.h>
#include <QVBoxLayout>
#include <cmath>
#include <iterator>

#include "log_axis_ticker.h"
#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

namespace {}  // namespace

SpectrumPanel::SpectrumPanel(QWidget* parent) : PlotPanel(parent) {
    plot_->xAxis->setLabel(tr("index i"));
    plot_->yAxis->setLabel(tr("singular value σᵢ"));
    plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    // Labels 1-2-5 multiples when the spectrum spans little more than a decade.
    plot_->yAxis->setTicker(QSharedPointer<LogAxisTicker>::create());
    plot_->yAxis->setNumberFormat(QStringLiteral("eb"));  // 10⁻² style labels
    plot_->yAxis->setNumberPrecision(0);
    plot_->setInteractions(QCP::iRangeZoom);
    plot_->setSelectionRectMode(QCP::srmZoom);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { redraw(); });
}

void SpectrumPanel::addSpectrum(const QString& method, int step, const QVector<double>& sv) {
    spectra_[method][step] = sv;
    redraw();
}

void SpectrumPanel::showStep(int step) {
    shownStep_ = step;
    history_ = false;
    redraw();
}

void SpectrumPanel::showHistory() {
    history_ = true;
    redraw();
}

void SpectrumPanel::setNormalised(bool on) {
    normalised_ = on;
    plot_->yAxis->setLabel(on ? tr("σᵢ / σ₁") : tr("singular value σᵢ"));
    redraw();
}

void SpectrumPanel::clear() {
    spectra_.clear();
    redraw();
}

int SpectrumPanel::curveCount() const {
    return plot_->graphCount();
}

QVector<int> SpectrumPanel::steps(const QString& method) const {
    return spectra_.value(method).keys().toVector();
}

QVector<double> SpectrumPanel::spectrum(const QString& method, int step) const {
    return spectra_.value(method).value(step);
}

int SpectrumPanel::displayedStep(const QString& method) const {
    const auto it = spectra_.constFind(method);
    if (it == spectra_.cend() || it->isEmpty()) return -1;
    if (history_ || shownStep_ < 0) return it->lastKey();
    // The latest at or before the shown step; the first one if they all come later.
    auto after = it->upperBound(shownStep_);
    return after == it->cbegin() ? it->firstKey() : std::prev(after).key();
}

QVector<double> SpectrumPanel::prepared(const QVector<double>& sv) const {
    QVector<double> out;
    const double top = sv.isEmpty() ? 1.0 : sv.front();
    // Below σ₁·1e-15 a singular value is round-off of an exact zero (dead units, rank
    // deficiency): it is left out rather than drawn decades down the log axis.
    constexpr double kNumericalZero = 1e-15;
    for (double v : sv) {
        const double y = normalised_ && top > 0 ? v / top : v;
        const bool shown = std::isfinite(y) && y > 0 && v > top * kNumericalZero;
        out.push_back(shown ? y : std::numeric_limits<double>::quiet_NaN());
    }
    return out;
}

void SpectrumPanel::redraw() {
    plot_->clearGraphs();
    for (auto it = spectra_.cbegin(); it != spectra_.cend(); ++it) {
        const QColor base = methodColor(it.key());
        QList<int> keys = it.value().keys();
        if (keys.isEmpty()) continue;
        const QList<int> shown = history_ ? keys : QList<int>{displayedStep(it.key())};
        for (int i = 0; i < shown.size(); ++i) {
            const auto sv = prepared(it.value().value(shown[i]));
            QVector<double> x(sv.size());
            for (int j = 0; j < x.size(); ++j) x[j] = j + 1;
            QCPGraph* g = plot_->addGraph();
            QColor c = base;
            if (history_ && shown.size() > 1) c.setAlphaF(0.2 + 0.8 * i / (shown.size() - 1));
            g->setPen(QPen(c, history_ && i + 1 < shown.size() ? 1.2 : 2.0));
            g->setData(x, sv, /*alreadySorted=*/true);
            const bool last = i + 1 == shown.size();
            g->setName(last ? QStringLiteral("%1 (step %2)").arg(it.key()).arg(shown[i])
                            : QString());
            if (!last) g->removeFromLegend();
        }
    }
    plot_->rescaleAxes();
    if (plot_->graphCount() > 0) {
        // A little room around the curves so the first σ and the tail do not sit on the box.
        const QCPRange x = plot_->xAxis->range();
        plot_->xAxis->setRange(x.lower - 0.5, x.upper + 0.5);
        const QCPRange y = plot_->yAxis->range();
        if (y.lower > 0) plot_->yAxis->setRange(y.lower / kLogMargin, y.upper * kLogMargin);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool SpectrumPanel::exportTo(const QString& path, int width, int height) {
    return exportPlot(plot_, path, width, height, tr("feature spectrum"));
}

}  // namespace liftlab
