// The run controls of the lab window: a toolbar that is always in view (Start, Queue,
// Pause/Resume, Stop, Re-run, and why Start is off when it is), and under the experiment form the
// shown metric (only the metrics of the shown run) and the run queue. The actions only signal;
// the window acts. The Run menu shows the same actions.
#pragma once
#include <QString>
#include <QStringList>
#include <QWidget>

class QAction;
class QComboBox;
class QLabel;
class QToolBar;

namespace liftlab {

class RunQueue;

class RunControls : public QWidget {
    Q_OBJECT
public:
    RunControls(const QString& metric, QWidget* parent = nullptr);

    RunQueue* queue() const { return queue_; }
    // The toolbar with the run actions (the window adds it; it cannot be hidden or moved).
    QToolBar* toolBar() const { return toolBar_; }
    QAction* startAction() const { return start_; }
    QAction* queueAction() const { return queueAction_; }
    QAction* pauseAction() const { return pause_; }
    QAction* stopAction() const { return stop_; }
    QAction* rerunAction() const { return rerun_; }
    QAction* resumeRunAction() const { return resumeRun_; }

    // Idle: Start on (unless blocked), Pause and Stop off; running: the reverse.
    void setRunning(bool running);
    bool isRunning() const { return running_; }
    void setPaused(bool paused);
    void setStopEnabled(bool on);
    bool stopEnabled() const;
    // Why the form cannot start now ("" when it can): Start and Queue are off and the toolbar
    // says why.
    void setStartBlocked(const QString& reason);
    QString startBlockedReason() const { return blocked_; }
    // Re-run repeats `what` (a run folder's name); "" turns it off.
    void setRerunTarget(const QString& what);
    // Resume run continues `what` (a killed, stopped or failed run folder's name) as
    // `liftlab-cli run --resume` does; with `whyNot` non-empty it is off and its tooltip says why.
    void setResumeTarget(const QString& what, const QString& whyNot);
    QString resumeTarget() const { return resumeTarget_; }

    // The metric box lists exactly `metrics` (the shown run's), showing `metric`.
    void setMetrics(const QStringList& metrics, const QString& metric);
    // Adds metrics the running experiment logs (each once).
    void addMetrics(const QStringList& metrics);
    QStringList metrics() const;
    void showMetric(const QString& metric);

Q_SIGNALS:
    void startClicked();
    void queueClicked();
    void pauseClicked();
    void stopClicked();
    void rerunClicked();
    void resumeRunClicked();
    void metricChosen(const QString& metric);

private:
    void updateActions();

    QComboBox* metric_;
    QToolBar* toolBar_;
    QAction* start_;
    QAction* queueAction_;
    QAction* pause_;
    QAction* stop_;
    QAction* rerun_;
    QAction* resumeRun_;
    QLabel* reason_;
    RunQueue* queue_;
    QString blocked_;
    QString rerunTarget_;
    QString resumeTarget_;
    QString resumeWhyNot_ = tr("no run is opened or was run");
    bool running_ = false;
    bool stopOn_ = false;
};

}  // namespace liftlab
