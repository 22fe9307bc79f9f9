// The lab window: a form that builds an experiment spec from a preset (left), live loss curves
// (right), progress and messages in the status bar. Training runs in a TrainingSession; this
// class only builds specs and shows values, so the GUI thread never blocks.
#pragma once
#include <QHash>
#include <QMainWindow>
#include <QString>
#include <QStringList>
#include <QVector>

#include "session_values.h"

class QCheckBox;
class QComboBox;
class QDoubleValidator;
class QGroupBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QVBoxLayout;

namespace liftlab {

class LossCurvePanel;
class TrainingSession;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    LossCurvePanel* curvePanel() const { return curvePanel_; }
    TrainingSession* session() const { return session_; }

    // Loads a built-in preset into the form; false for an unknown name.
    bool selectPreset(const QString& name);
    void setSteps(int steps);
    void setOutputDir(const QString& dir);
    // The method checkboxes of the current preset, by label.
    QStringList methodLabels() const;
    void setMethodChecked(const QString& label, bool checked);

    // Builds the spec from the form and starts it; a bad form leaves a message in the status bar
    // and starts nothing.
    void startRun();
    void stopRun();

    // The metric the curve panel shows (test_loss by default); any metric the run logs.
    void showMetric(const QString& metric);
    QString shownMetric() const { return shownMetric_; }

    QString lastRunDir() const { return lastRunDir_; }
    QString statusText() const;

Q_SIGNALS:
    // After the window has shown the outcome of a run (finished or failed).
    void runEnded(bool ok);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    QWidget* buildForm();
    void onPresetChanged(int index);
    void rebuildMethodBoxes();
    void setRunning(bool running);
    void showMessage(const QString& text, bool error = false);
    QString progressText() const;

    void onPoints(const QVector<liftlab::SessionPoint>& points);
    void appendToPanel(const QVector<liftlab::SessionPoint>& points);
    void onStatus(const liftlab::SessionStatus& status);
    void onProgress(double fraction, int step, int total);
    void onFinished(const QString& status, const QString& runDir);
    void onFailed(const QString& message);

    TrainingSession* session_ = nullptr;
    LossCurvePanel* curvePanel_ = nullptr;
    QSplitter* splitter_ = nullptr;

    QWidget* form_ = nullptr;
    QComboBox* presetCombo_ = nullptr;
    QLabel* presetDescription_ = nullptr;
    QGroupBox* methodsBox_ = nullptr;
    QVBoxLayout* methodsLayout_ = nullptr;
    QVector<QCheckBox*> methodBoxes_;
    QSpinBox* batchSpin_ = nullptr;
    QSpinBox* seedSpin_ = nullptr;
    QSpinBox* stepsSpin_ = nullptr;
    QComboBox* optimizerCombo_ = nullptr;
    QLineEdit* lambdaEdit_ = nullptr;
    QLineEdit* betaEdit_ = nullptr;
    QLineEdit* outDirEdit_ = nullptr;
    QPushButton* startButton_ = nullptr;
    QPushButton* stopButton_ = nullptr;
    QLabel* statusLabel_ = nullptr;
    QProgressBar* progressBar_ = nullptr;

    QComboBox* metricCombo_ = nullptr;
    QString shownMetric_;
    QVector<liftlab::SessionPoint> history_;  // every point of the current run, for re-plotting
    QHash<QString, QString> seriesNotes_;     // method → "diverged at step 12"
    QString runTitle_;

    QString lastRunDir_;
    QStringList methodNotes_;  // "sgd diverged at step 12", kept for the final message
    int lastStep_ = 0;
    int totalSteps_ = 0;
};

}  // namespace liftlab
