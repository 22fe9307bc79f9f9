// The checkpoint slider of the run view (issue 40 item 2, "or use the checkpoint slider"): a
// slider over the shown run's kept fork states (states/, spec key fork_state_every) whose handle
// snaps to the saved steps — its positions are those steps, nothing between — with the step it
// stands on and "Fork from step N…", the same action as the curves' right-click menu. Hidden
// while the shown run has no kept state (a run going on, a comparison, fork_state_every 0).
#pragma once
#include <QVector>
#include <QWidget>

class QLabel;
class QPushButton;
class QSlider;

namespace liftlab {

class ForkPointSlider : public QWidget {
    Q_OBJECT
public:
    explicit ForkPointSlider(QWidget* parent = nullptr);

    // The kept steps, ascending (empty: hidden). The handle goes to the last one.
    void setSteps(const QVector<int>& steps);
    const QVector<int>& steps() const { return steps_; }
    // The kept step under the handle (-1 without steps).
    int currentStep() const;
    // Puts the handle on the kept step nearest `step` (ties: the earlier one).
    void setNearestStep(int step);

    QSlider* slider() const { return slider_; }
    QPushButton* forkButton() const { return fork_; }

Q_SIGNALS:
    // The handle moved to a kept step (by the user or setNearestStep).
    void stepChosen(int step);
    // "Fork from step N…" was clicked.
    void forkRequested(int step);

private:
    void showStep();

    QVector<int> steps_;
    QSlider* slider_ = nullptr;
    QLabel* stepLabel_ = nullptr;
    QPushButton* fork_ = nullptr;
};

}  // namespace liftlab
