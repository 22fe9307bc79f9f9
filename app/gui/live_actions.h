// The window's actions on a run while it trains (issue 40): "Change setting…" (a method's live
// setting: lr, cf-prox λ, cf-ridge/cf-full β, cf-rls ρ, the ICNN methods' lr) and "Push into the
// shoulder…" (ICNN runs: a fraction of the readout, hidden or all constrained coordinates set to
// a depth θ̃ < log(0.05/0.95)). Each opens a small dialog (never modal to the run: training goes
// on) whose choice is sent to the worker as an event (TrainingSession::sendEvent): it takes
// effect after the step the run gives it, is written to events.csv and spec.json, and is drawn
// as a marker. "Landscape at this step" computes the landscapes of the run's latest saved
// iterate beside the training (LandscapePage). GUI thread only; nothing here waits for the run.
#pragma once
#include <QDialog>
#include <QObject>
#include <QString>

#include "session_values.h"
#include "spec/experiment_spec.h"

class QAction;
class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;

namespace liftlab {

class MainWindow;
class TrainingSession;

// Which method, which of its live settings, the value now and the new one.
class LiveSettingDialog : public QDialog {
    Q_OBJECT
public:
    LiveSettingDialog(const ExperimentSpec& spec, const TrainingSession* session,
                      QWidget* parent = nullptr);
    QComboBox* methodBox() const { return method_; }
    QComboBox* keyBox() const { return key_; }
    QLineEdit* valueEdit() const { return value_; }
    QDialogButtonBox* buttons() const { return buttons_; }
    QLabel* errorLabel() const { return error_; }
    // The event the dialog describes; false (and why in `error`) when the value is not a number.
    bool describedEvent(RunEvent* out, QString* error) const;

Q_SIGNALS:
    void chosen(const liftlab::RunEvent& event);

private:
    void fillKeys();
    void showCurrent();
    void tryAccept();

    ExperimentSpec spec_;
    const TrainingSession* session_;
    QComboBox* method_;
    QComboBox* key_;
    QLabel* now_;
    QLineEdit* value_;
    QLabel* error_;
    QDialogButtonBox* buttons_;
};

// The layers, the fraction of their constrained coordinates and the depth θ̃ they are set to.
class PushDialog : public QDialog {
    Q_OBJECT
public:
    explicit PushDialog(QWidget* parent = nullptr);
    QComboBox* layersBox() const { return layers_; }
    QDoubleSpinBox* fractionBox() const { return fraction_; }
    QDoubleSpinBox* depthBox() const { return depth_; }
    QDialogButtonBox* buttons() const { return buttons_; }
    RunEvent pushEvent() const;

Q_SIGNALS:
    void chosen(const liftlab::RunEvent& event);

private:
    void showDepth();

    QComboBox* layers_;
    QDoubleSpinBox* fraction_;
    QDoubleSpinBox* depth_;
    QLabel* sigma_;
    QDialogButtonBox* buttons_;
};

class LiveActions : public QObject {
    Q_OBJECT
public:
    LiveActions(MainWindow* window, TrainingSession* session);

    QAction* changeSettingAction() const { return change_; }
    QAction* pushAction() const { return push_; }
    QAction* landscapeNowAction() const { return landscapeNow_; }
    // Enabled while a run trains (Push: an ICNN run of the liftlab architecture).
    void setRunning(bool running);
    // The dialog now open (null when none): tests fill it through its widgets.
    LiveSettingDialog* settingDialog() const { return settingDialog_; }
    PushDialog* pushDialog() const { return pushDialog_; }
    // Why Push is off for the running spec ("" when it is on).
    static QString whyNoPush(const ExperimentSpec& spec);

    void openChangeSetting();
    void openPush();
    // The Landscape tab computes the landscapes at the run's latest checkpoint, beside the
    // training; false (and a message) when it cannot.
    bool landscapeNow();

private:
    void send(const RunEvent& event);
    void onOutcome(const liftlab::SessionEventOutcome& outcome);

    MainWindow* window_;
    TrainingSession* session_;
    QAction* change_;
    QAction* push_;
    QAction* landscapeNow_;
    LiveSettingDialog* settingDialog_ = nullptr;
    PushDialog* pushDialog_ = nullptr;
};

}  // namespace liftlab
