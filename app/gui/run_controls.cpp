#include "run_controls.h"

#include <QAction>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSignalBlocker>
#include <QStyle>
#include <QToolBar>
#include <QToolButton>
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
    metric_->addItem(metric);  // the shown run's metrics replace it
    metric_->setToolTip(tr("Metric shown in the Curves tab: every metric the shown run logged"));
    plotLayout->addRow(tr("Metric"), metric_);
    connect(metric_, &QComboBox::currentTextChanged, this, &RunControls::metricChosen);
    column->addWidget(plotBox);
    queue_ = new RunQueue(this);
    column->addWidget(queue_);

    toolBar_ = new QToolBar(tr("Run"), this);
    toolBar_->setObjectName(QStringLiteral("runToolBar"));
    toolBar_->setMovable(false);
    toolBar_->setFloatable(false);
    toolBar_->toggleViewAction()->setEnabled(false);  // always in view
    toolBar_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    auto action = [&](const QString& text, const char* name, QStyle::StandardPixmap icon,
                      const QKeySequence& key, const QString& tip, void (RunControls::*signal)()) {
        auto* a = new QAction(style()->standardIcon(icon), text, this);
        a->setObjectName(QLatin1String(name));
        a->setShortcut(key);
        a->setToolTip(QStringLiteral("%1 (%2)").arg(tip, key.toString(QKeySequence::NativeText)));
        connect(a, &QAction::triggered, this, signal);
        toolBar_->addAction(a);
        toolBar_->widgetForAction(a)->setObjectName(QLatin1String(name));
        return a;
    };
    start_ = action(tr("Start"), "start", QStyle::SP_MediaPlay, QKeySequence(Qt::CTRL | Qt::Key_R),
                    tr("Run the experiment the form shows"), &RunControls::startClicked);
    queueAction_ = action(tr("Queue"), "queue", QStyle::SP_FileDialogListView,
                          QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R),
                          tr("Add the form's experiment to the run queue (starts now if idle)"),
                          &RunControls::queueClicked);
    pause_ = action(tr("Pause"), "pause", QStyle::SP_MediaPause, QKeySequence(Qt::CTRL | Qt::Key_P),
                    tr("Hold the running experiment (nothing is lost) or let it go on"),
                    &RunControls::pauseClicked);
    stop_ =
        action(tr("Stop"), "stop", QStyle::SP_MediaStop, QKeySequence(Qt::CTRL | Qt::Key_Period),
               tr("End the running experiment; its folder keeps what it logged"),
               &RunControls::stopClicked);
    toolBar_->addSeparator();
    rerun_ = action(tr("Re-run"), "rerun", QStyle::SP_BrowserReload,
                    QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_R),
                    tr("Run the opened run again, exactly as its spec.json says"),
                    &RunControls::rerunClicked);
    // "Resume run", not "Resume": Pause turns into Resume while a run is held.
    resumeRun_ = action(tr("Resume run"), "resumeRun", QStyle::SP_MediaSeekForward,
                        QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_U),
                        tr("Continue the stopped run as liftlab-cli run --resume does"),
                        &RunControls::resumeRunClicked);
    reason_ = new QLabel(toolBar_);
    reason_->setObjectName(QStringLiteral("startReason"));
    reason_->setStyleSheet(QStringLiteral("color: #b00020; padding-left: 10px;"));
    reason_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    toolBar_->addWidget(reason_);
    updateActions();
}

void RunControls::updateActions() {
    const bool blocked = !blocked_.isEmpty();
    start_->setEnabled(!running_ && !blocked);
    queueAction_->setEnabled(!blocked);
    pause_->setEnabled(running_);
    stop_->setEnabled(running_ && stopOn_);
    rerun_->setEnabled(!running_ && !rerunTarget_.isEmpty());
    rerun_->setToolTip(rerunTarget_.isEmpty()
                           ? tr("Open a run (history: double-click) to run it again exactly")
                           : tr("Run %1 again, exactly as its spec.json says").arg(rerunTarget_));
    const bool resumable = !resumeTarget_.isEmpty() && resumeWhyNot_.isEmpty();
    resumeRun_->setEnabled(!running_ && resumable);
    resumeRun_->setToolTip(
        resumable ? tr("Continue %1 from its last saved state, as liftlab-cli run --resume does")
                        .arg(resumeTarget_)
                  : tr("Nothing to resume: %1").arg(resumeWhyNot_));
    reason_->setText(blocked ? tr("Start is off: %1").arg(blocked_) : QString());
    reason_->setToolTip(blocked_);
    for (QAction* a : {start_, queueAction_})
        if (auto* w = toolBar_->widgetForAction(a))
            w->setToolTip(blocked ? tr("Off: %1").arg(blocked_) : a->toolTip());
}

void RunControls::setRunning(bool running) {
    running_ = running;
    stopOn_ = running;
    pause_->setText(tr("Pause"));
    updateActions();
}

void RunControls::setPaused(bool paused) {
    pause_->setText(paused ? tr("Resume") : tr("Pause"));
    pause_->setIcon(style()->standardIcon(paused ? QStyle::SP_MediaPlay : QStyle::SP_MediaPause));
}

void RunControls::setStopEnabled(bool on) {
    stopOn_ = on;
    updateActions();
}

bool RunControls::stopEnabled() const {
    return stop_->isEnabled();
}

void RunControls::setStartBlocked(const QString& reason) {
    blocked_ = reason;
    updateActions();
}

void RunControls::setRerunTarget(const QString& what) {
    rerunTarget_ = what;
    updateActions();
}

void RunControls::setResumeTarget(const QString& what, const QString& whyNot) {
    resumeTarget_ = what;
    resumeWhyNot_ = whyNot;
    updateActions();
}

void RunControls::setMetrics(const QStringList& metrics, const QString& metric) {
    const QSignalBlocker block(metric_);
    metric_->clear();
    metric_->addItems(metrics);
    if (metric_->findText(metric) < 0) metric_->addItem(metric);
    metric_->setCurrentText(metric);
}

void RunControls::addMetrics(const QStringList& metrics) {
    for (const QString& m : metrics)
        if (metric_->findText(m) < 0) metric_->addItem(m);
}

QStringList RunControls::metrics() const {
    QStringList out;
    for (int i = 0; i < metric_->count(); ++i) out << metric_->itemText(i);
    return out;
}

void RunControls::showMetric(const QString& metric) {
    if (metric_->currentText() == metric) return;
    addMetrics({metric});
    metric_->setCurrentText(metric);
}

}  // namespace liftlab
