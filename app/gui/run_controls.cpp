#include "run_controls.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QPushButton>
#include <QVBoxLayout>

#include "run_queue.h"

namespace liftlab {

RunControls::RunControls(const QString& metric, QWidget* parent) : QWidget(parent) {
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    auto* plotBox = new QGroupBox(tr("Plot"), this);
    auto* plotLayout = new QFormLayout(plotBox);
    metric_ = new QComboBox(plotBox);
    metric_->setObjectName(QStringLiteral("metric"));
    metric_->addItem(metric);  // further metrics are added as a run logs them
    metric_->setToolTip(tr("Metric shown in the plot; every logged metric can be chosen"));
    plotLayout->addRow(tr("Metric"), metric_);
    connect(metric_, &QComboBox::currentTextChanged, this, &RunControls::metricChosen);
    column->addWidget(plotBox);

    auto* buttons = new QHBoxLayout;
    auto button = [&](const QString& text, const char* name, void (RunControls::*clicked)()) {
        auto* b = new QPushButton(text, this);
        b->setObjectName(QLatin1String(name));
        buttons->addWidget(b);
        connect(b, &QPushButton::clicked, this, clicked);
        return b;
    };
    start_ = button(tr("Start"), "start", &RunControls::startClicked);
    start_->setDefault(true);
    queueButton_ = button(tr("Queue"), "queue", &RunControls::queueClicked);
    queueButton_->setToolTip(tr("Add this experiment to the run queue (starts now if idle)"));
    pause_ = button(tr("Pause"), "pause", &RunControls::pauseClicked);
    stop_ = button(tr("Stop"), "stop", &RunControls::stopClicked);
    column->addLayout(buttons);
    queue_ = new RunQueue(this);
    column->addWidget(queue_);
}

void RunControls::setRunning(bool running) {
    start_->setEnabled(!running);
    stop_->setEnabled(running);
    pause_->setEnabled(running);
    pause_->setText(tr("Pause"));
}

void RunControls::setPaused(bool paused) {
    pause_->setText(paused ? tr("Resume") : tr("Pause"));
}

void RunControls::setStopEnabled(bool on) {
    stop_->setEnabled(on);
}

bool RunControls::stopEnabled() const {
    return stop_->isEnabled();
}

void RunControls::addMetrics(const QStringList& metrics) {
    for (const QString& m : metrics)
        if (metric_->findText(m) < 0) metric_->addItem(m);
}

void RunControls::showMetric(const QString& metric) {
    if (metric_->currentText() == metric) return;
    addMetrics({metric});
    metric_->setCurrentText(metric);
}

}  // namespace liftlab
