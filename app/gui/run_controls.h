// Under the experiment form: the shown metric (it can change while a run goes on), Start, Queue,
// Pause/Resume and Stop, and the run queue. The buttons only signal; the window acts.
#pragma once
#include <QString>
#include <QStringList>
#include <QWidget>

class QComboBox;
class QPushButton;

namespace liftlab {

class RunQueue;

class RunControls : public QWidget {
    Q_OBJECT
public:
    RunControls(const QString& metric, QWidget* parent = nullptr);

    RunQueue* queue() const { return queue_; }
    // Idle: Start on, Pause and Stop off; running: the reverse.
    void setRunning(bool running);
    void setPaused(bool paused);
    void setStopEnabled(bool on);
    bool stopEnabled() const;
    // Offers `metrics` in the metric box (each once), and shows `metric` there.
    void addMetrics(const QStringList& metrics);
    void showMetric(const QString& metric);

Q_SIGNALS:
    void startClicked();
    void queueClicked();
    void pauseClicked();
    void stopClicked();
    void metricChosen(const QString& metric);

private:
    QComboBox* metric_;
    QPushButton* start_;
    QPushButton* queueButton_;
    QPushButton* pause_;
    QPushButton* stop_;
    RunQueue* queue_;
};

}  // namespace liftlab
