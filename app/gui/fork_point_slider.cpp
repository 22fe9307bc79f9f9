#include "fork_point_slider.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <algorithm>
#include <cstdlib>

namespace liftlab {

ForkPointSlider::ForkPointSlider(QWidget* parent) : QWidget(parent) {
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(6, 2, 6, 2);
    auto* title = new QLabel(tr("Kept states"), this);
    slider_ = new QSlider(Qt::Horizontal, this);
    slider_->setObjectName(QStringLiteral("forkPoints"));
    slider_->setTickPosition(QSlider::TicksBelow);
    slider_->setPageStep(1);
    slider_->setMinimumWidth(160);
    slider_->setToolTip(
        tr("The steps at which this run kept a fork state (spec key fork_state_every): the "
           "handle stops only on them"));
    title->setBuddy(slider_);
    stepLabel_ = new QLabel(this);
    stepLabel_->setObjectName(QStringLiteral("forkPointStep"));
    stepLabel_->setMinimumWidth(stepLabel_->fontMetrics().horizontalAdvance(tr("step 000000")));
    fork_ = new QPushButton(this);
    fork_->setObjectName(QStringLiteral("forkFromPoint"));
    fork_->setToolTip(
        tr("Opens the form as a fork of this run from the kept state under the handle (as "
           "liftlab-cli run --fork DIR --from-step N)"));
    row->addWidget(title);
    row->addWidget(slider_, 1);
    row->addWidget(stepLabel_);
    row->addWidget(fork_);
    connect(slider_, &QSlider::valueChanged, this, [this] {
        showStep();
        Q_EMIT stepChosen(currentStep());
    });
    connect(fork_, &QPushButton::clicked, this, [this] {
        if (currentStep() >= 0) Q_EMIT forkRequested(currentStep());
    });
    setSteps({});
}

void ForkPointSlider::setSteps(const QVector<int>& steps) {
    steps_ = steps;
    {
        const QSignalBlocker block(slider_);
        slider_->setRange(0, std::max<int>(0, int(steps_.size()) - 1));
        slider_->setValue(slider_->maximum());
    }
    setVisible(!steps_.isEmpty());
    showStep();
}

int ForkPointSlider::currentStep() const {
    const int i = slider_->value();
    return i >= 0 && i < steps_.size() ? steps_[i] : -1;
}

void ForkPointSlider::setNearestStep(int step) {
    if (steps_.isEmpty()) return;
    int best = 0;
    for (int i = 1; i < steps_.size(); ++i)
        if (std::abs(steps_[i] - step) < std::abs(steps_[best] - step)) best = i;
    slider_->setValue(best);
}

void ForkPointSlider::showStep() {
    const int step = currentStep();
    stepLabel_->setText(step < 0 ? QString() : tr("step %1").arg(step));
    fork_->setText(step < 0 ? tr("Fork from step…") : tr("Fork from step %1…").arg(step));
    fork_->setEnabled(step >= 0);
}

}  // namespace liftlab
