#include "spectrum_timeline.h"
#include "plot_style.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "spectrum_panel.h"

namespace liftlab {

namespace {

constexpr int kPlayIntervalMs = 125;     // about 8 steps per second
constexpr double kRelativeZero = 1e-12;  // σ below this share of σ_max do not count for κ

bool usable(double sigma) {
    return std::isfinite(sigma) && sigma > 0;
}

QString formatted(double v, char format, int precision) {
    return std::isfinite(v) ? QString::number(v, format, precision) : QStringLiteral("—");
}

}  // namespace

SpectrumTimeline::SpectrumTimeline(QWidget* parent)
    : QWidget(parent),
      panel_(new SpectrumPanel(this)),
      slider_(new QSlider(Qt::Horizontal, this)),
      playButton_(new QToolButton(this)),
      stepLabel_(new QLabel(this)),
      readout_(new QLabel(this)),
      timer_(new QTimer(this)) {
    auto* controls = new QHBoxLayout;
    controls->addWidget(playButton_);
    controls->addWidget(slider_, 1);
    controls->addWidget(stepLabel_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(panel_, 1);
    layout->addLayout(controls);
    layout->addWidget(readout_);

    playButton_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    playButton_->setAutoRaise(false);
    connect(playButton_, &QToolButton::clicked, this, [this] { playing() ? pause() : play(); });
    slider_->setPageStep(1);
    slider_->setTracking(true);  // the plot follows while the handle is dragged
    connect(slider_, &QSlider::valueChanged, this, [this](int index) { showIndex(index); });
    timer_->setInterval(kPlayIntervalMs);
    connect(timer_, &QTimer::timeout, this, &SpectrumTimeline::stepForward);
    stepLabel_->setMinimumWidth(
        stepLabel_->fontMetrics().horizontalAdvance("step 0000000 (000/000)"));
    readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    readout_->setContentsMargins(6, 2, 6, 4);
    clear();
}

QCustomPlot* SpectrumTimeline::plot() const {
    return panel_->plot();
}

void SpectrumTimeline::addSpectrum(const QString& method, int step, const QVector<double>& sv) {
    panel_->addSpectrum(method, step, sv);
    const auto at = std::lower_bound(steps_.begin(), steps_.end(), step);
    if (at == steps_.end() || *at != step) steps_.insert(at, step);
    slider_->setEnabled(true);
    updatePlayButton();
    {
        const QSignalBlocker block(slider_);
        slider_->setRange(0, steps_.size() - 1);
    }
    if (live_ || shownStep_ < 0) {
        showIndex(steps_.size() - 1);
    } else {
        // Scrubbed back: stay on the same step, whose index may have moved.
        showIndex(steps_.indexOf(shownStep_));
    }
}

void SpectrumTimeline::showStep(int step) {
    if (steps_.isEmpty()) return;
    const auto after = std::upper_bound(steps_.cbegin(), steps_.cend(), step);
    showIndex(after == steps_.cbegin() ? 0 : static_cast<int>(after - steps_.cbegin()) - 1);
}

void SpectrumTimeline::showIndex(int index) {
    if (steps_.isEmpty()) return;
    index = std::clamp(index, 0, static_cast<int>(steps_.size()) - 1);
    if (slider_->value() != index) {
        const QSignalBlocker block(slider_);
        slider_->setValue(index);
    }
    const int step = steps_[index];
    live_ = index == steps_.size() - 1;
    const bool changed = step != shownStep_;
    shownStep_ = step;
    panel_->showStep(step);
    stepLabel_->setText(tr("step %1 (%2/%3)").arg(step).arg(index + 1).arg(steps_.size()));
    updateReadout();
    if (changed) Q_EMIT stepShown(step);
}

void SpectrumTimeline::play() {
    if (steps_.size() < 2) return;
    if (slider_->value() >= steps_.size() - 1) showIndex(0);  // replay from the start
    if (playing()) return;
    timer_->start();
    updatePlayButton();
    Q_EMIT playingChanged(true);
}

void SpectrumTimeline::pause() {
    if (!playing()) return;
    timer_->stop();
    updatePlayButton();
    Q_EMIT playingChanged(false);
}

bool SpectrumTimeline::playing() const {
    return timer_->isActive();
}

void SpectrumTimeline::stepForward() {
    const int next = slider_->value() + 1;
    if (next < steps_.size()) showIndex(next);
    if (next >= steps_.size() - 1) pause();
}

void SpectrumTimeline::updatePlayButton() {
    const bool on = playing();
    playButton_->setIcon(style()->standardIcon(on ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    playButton_->setText(on ? tr("Pause") : tr("Play"));
    playButton_->setEnabled(steps_.size() > 1);
}

double SpectrumTimeline::conditionNumber(const QVector<double>& sv) {
    double top = 0.0;
    for (double s : sv)
        if (usable(s)) top = std::max(top, s);
    if (top <= 0) return kNaN;
    double low = top;
    for (double s : sv)
        if (usable(s) && s > kRelativeZero * top) low = std::min(low, s);
    return top / low;
}

double SpectrumTimeline::effectiveRank(const QVector<double>& sv) {
    double sum = 0.0;
    for (double s : sv)
        if (usable(s)) sum += s;
    if (!(sum > 0) || !std::isfinite(sum)) return kNaN;
    double entropy = 0.0;
    for (double s : sv) {
        if (!usable(s)) continue;
        const double p = s / sum;
        entropy -= p * std::log(p);
    }
    return std::exp(entropy);
}

QString SpectrumTimeline::readoutText() const {
    return readout_->text();
}

void SpectrumTimeline::updateReadout() {
    QStringList lines;
    for (const QString& method : panel_->methods()) {
        const int step = panel_->displayedStep(method);
        const QVector<double> sv = panel_->spectrum(method, step);
        int n = 0;
        for (double s : sv) n += usable(s) ? 1 : 0;
        lines << tr("%1 @ step %2: κ = %3, effective rank %4 of %5")
                     .arg(method)
                     .arg(step)
                     .arg(formatted(conditionNumber(sv), 'g', 4))
                     .arg(formatted(effectiveRank(sv), 'f', 2))
                     .arg(n);
    }
    readout_->setText(lines.isEmpty() ? tr("no spectra recorded") : lines.join(QLatin1Char('\n')));
}

void SpectrumTimeline::clear() {
    pause();
    panel_->clear();
    panel_->showStep(-1);
    steps_.clear();
    shownStep_ = -1;
    live_ = true;
    {
        const QSignalBlocker block(slider_);
        slider_->setRange(0, 0);
        slider_->setValue(0);
    }
    slider_->setEnabled(false);
    stepLabel_->setText(tr("no steps"));
    updatePlayButton();
    updateReadout();
}

bool SpectrumTimeline::exportTo(const QString& path, int width, int height) {
    return panel_->exportTo(path, width, height);
}

}  // namespace liftlab
