#include "spectrum_panel.h"

#include <qcustomplot.h>
#include <QVBoxLayout>
#include <cmath>

#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

SpectrumPanel::SpectrumPanel(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    setMinimumSize(320, 240);
    applyLabStyle(plot_);
    plot_->xAxis->setLabel(tr("index i"));
    plot_->yAxis->setLabel(tr("singular value σᵢ"));
    plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    plot_->setInteractions(QCP::iRangeZoom);
    plot_->setSelectionRectMode(QCP::srmZoom);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { redraw(); });
}

void SpectrumPanel::setTitle(const QString& title) {
    setPlotTitle(plot_, title_, title);
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
        QList<int> shown;
        if (history_) {
            shown = keys;
        } else {
            int chosen = keys.front();
            for (int s : keys)
                if (shownStep_ < 0 || s <= shownStep_) chosen = s;
            shown = {chosen};
        }
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
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool SpectrumPanel::exportTo(const QString& path, int width, int height) {
    return exportPlot(plot_, path, width, height, tr("feature spectrum"));
}

}  // namespace liftlab
