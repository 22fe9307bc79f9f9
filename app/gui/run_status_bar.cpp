#include "run_status_bar.h"

#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <algorithm>

namespace liftlab {

namespace {
constexpr int kProgressScale = 1000;  // QProgressBar is integer: per-mille resolution
}

RunStatusBar::RunStatusBar(QStatusBar* bar)
    : QObject(bar),
      label_(new QLabel(bar)),
      progress_(new QProgressBar(bar)),
      cancel_(new QPushButton(tr("Cancel"), bar)) {
    label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    progress_->setRange(0, kProgressScale);
    progress_->setValue(0);
    progress_->setMaximumWidth(220);
    bar->addWidget(label_, 1);
    cancel_->setObjectName(QStringLiteral("statusCancel"));
    cancel_->setToolTip(tr("Stop the run, or the landscape being computed"));
    connect(cancel_, &QPushButton::clicked, this, &RunStatusBar::cancelRequested);
    bar->addPermanentWidget(progress_);
    bar->addPermanentWidget(cancel_);
}

void RunStatusBar::showMessage(const QString& text, bool error) {
    label_->setText(text);
    label_->setStyleSheet(error ? QStringLiteral("color: #b00020; font-weight: bold;") : QString());
}

QString RunStatusBar::text() const {
    return label_->text();
}

void RunStatusBar::setFraction(double fraction) {
    progress_->setValue(static_cast<int>(fraction * kProgressScale + 0.5));
}

void RunStatusBar::setCancelEnabled(bool on) {
    cancel_->setEnabled(on);
}

void RunStatusBar::beginRun(int totalSteps) {
    notes_.clear();
    step_ = 0;
    totalSteps_ = totalSteps;
    progress_->setValue(0);
}

void RunStatusBar::setStep(int step, int totalSteps) {
    step_ = step;
    totalSteps_ = totalSteps;
}

QString RunStatusBar::progressText() const {
    QString text =
        paused_ ? tr("Paused at step %L1 / %L2 — Resume goes on, Stop ends")
                      .arg(std::max(step_, 0))
                      .arg(totalSteps_)
        : step_ < 0 ? tr("Preparing data — %1 %").arg(progress_->value() * 100 / kProgressScale)
        : workers_.size() > 1 ? tr("Running — %1").arg(workers_.join(QStringLiteral(", ")))
                              : tr("Running — step %L1 / %L2").arg(step_).arg(totalSteps_);
    if (!notes_.isEmpty()) text += QStringLiteral(" · ") + notes_.join(QStringLiteral(" · "));
    return text;
}

}  // namespace liftlab
