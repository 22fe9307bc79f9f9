// The lab window: a form that builds an experiment spec from a preset (left), the panels as tabs
// (RunView: curves, spectrum, landscape, escape dynamics, ablation), the run history (dock),
// progress with Cancel in the status bar, a run queue, export of every panel. Training and
// landscapes run on worker threads; this class only builds specs and shows values, so the GUI
// thread never blocks.
#pragma once
#include <QHash>
#include <QMainWindow>
#include <QString>
#include <QStringList>
#include <QVector>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "session_values.h"

class QAction;
class QCheckBox;
class QDockWidget;
class QListWidget;
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
class RunHistoryPanel;
class RunView;
class SpecEditor;
class TrainingSession;
struct RunFolderData;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    LossCurvePanel* curvePanel() const { return curvePanel_; }
    RunView* runView() const { return view_; }
    RunHistoryPanel* history() const { return historyPanel_; }
    SpecEditor* specEditor() const { return specEditor_; }
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
    // Pauses or resumes the running experiment (nothing is lost; Stop still works).
    void togglePause();
    // Adds the form's experiment to the queue; starts it at once when nothing runs. False when
    // the form is invalid (the status bar says why).
    bool queueRun();
    int queuedRuns() const;

    // Shows a finished run folder in every panel; with `compareDir`, its curves are overlaid
    // with " [name]" labels. False (and a message) when it is not a readable run folder.
    bool openRun(const QString& runDir, const QString& compareDir = QString());
    QString openedRun() const { return openedRun_; }

    // Exports: the current panel (format by extension), all panels into a folder, the shown
    // curves as CSV, the current plot to the clipboard. PNG pixel size = widget size × dpi / 96.
    bool exportCurrentPanel(const QString& path);
    QStringList exportAllPanels(const QString& dir, const QString& format);
    bool exportCurvesCsv(const QString& path);
    void copyPlotToClipboard();
    void setExportDpi(int dpi);
    int exportDpi() const { return exportDpi_; }

    void setDarkPalette(bool on);
    bool darkPalette() const { return dark_; }

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
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    struct QueuedRun {
        nlohmann::json spec;
        QString outDir, title;
    };
    QWidget* buildForm();
    void buildMenus();
    bool buildSpec(nlohmann::json* spec, QString* title);
    void startSpec(const nlohmann::json& spec, const QString& outDir, const QString& title);
    void startNextQueued();
    void refreshQueueView();
    void saveSession();
    void restoreSession();
    void redrawCurves();
    QSize exportSize() const;
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
    RunView* view_ = nullptr;
    RunHistoryPanel* historyPanel_ = nullptr;
    QDockWidget* historyDock_ = nullptr;
    QSplitter* splitter_ = nullptr;
    QPushButton* queueButton_ = nullptr;
    QPushButton* pauseButton_ = nullptr;
    QPushButton* cancelButton_ = nullptr;  // status bar
    QListWidget* queueList_ = nullptr;
    QAction* pauseAction_ = nullptr;
    QAction* darkAction_ = nullptr;
    QVector<QueuedRun> queue_;
    std::shared_ptr<RunFolderData> opened_, compared_;  // shown instead of the live history
    QString openedRun_;
    int exportDpi_ = 144;
    bool dark_ = false;

    QWidget* form_ = nullptr;
    QComboBox* presetCombo_ = nullptr;
    QLabel* presetDescription_ = nullptr;
    QGroupBox* methodsBox_ = nullptr;
    QVBoxLayout* methodsLayout_ = nullptr;
    QVector<QCheckBox*> methodBoxes_;
    SpecEditor* specEditor_ = nullptr;
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
    QHash<QString, QString> seriesNotes_;
    std::optional<quint64> liveFirstSeed_;  // the live run's first seed
    QHash<QString, quint64> liveSeed_;  // method → the seed its live curve follows     // method →
                                        // "diverged at step 12"
    QString runTitle_;

    QString lastRunDir_;
    QStringList methodNotes_;  // "sgd diverged at step 12", kept for the final message
    int lastStep_ = 0;
    int totalSteps_ = 0;
    QStringList workers_;  // each parallel worker's seed and step (TrainingSession::workersChanged)
};

}  // namespace liftlab
