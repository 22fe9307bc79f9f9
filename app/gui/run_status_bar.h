// The lab window's status bar: a message (red and bold for errors), the progress of the run or of
// a landscape, and Cancel. While a run goes on it says where the run is ("Running — step 120 /
// 2000", or every parallel worker's seed and step) and which methods stopped early.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>

class QLabel;
class QProgressBar;
class QPushButton;
class QStatusBar;

namespace liftlab {

class RunStatusBar : public QObject {
    Q_OBJECT
public:
    explicit RunStatusBar(QStatusBar* bar);

    void showMessage(const QString& text, bool error = false);
    QString text() const;
    // Fraction done of the run (or landscape) in [0, 1].
    void setFraction(double fraction);
    void setCancelEnabled(bool on);

    // A new run of `totalSteps` steps per seed.
    void beginRun(int totalSteps);
    void setStep(int step, int totalSteps);
    int step() const { return step_; }
    int totalSteps() const { return totalSteps_; }
    void setWorkers(const QStringList& workers) { workers_ = workers; }
    // "sgd diverged at step 12": shown after the progress and in the final message.
    void addNote(const QString& note) { notes_ << note; }
    const QStringList& notes() const { return notes_; }
    // A paused run says "Paused" (and stays so until resumed, whatever report arrives).
    void setPaused(bool paused) { paused_ = paused; }
    bool paused() const { return paused_; }
    // Where the run is, with the notes.
    QString progressText() const;

Q_SIGNALS:
    void cancelRequested();

private:
    QLabel* label_;
    QProgressBar* progress_;
    QPushButton* cancel_;
    int step_ = 0;
    int totalSteps_ = 0;
    bool paused_ = false;
    QStringList workers_;  // each parallel worker's seed and step
    QStringList notes_;
};

}  // namespace liftlab
