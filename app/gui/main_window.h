// The lab window: the experiment form (left), the panels as tabs (RunView: curves, spectrum,
// landscape, escape dynamics, ablation, sweep), the run history (dock), progress with Cancel in
// the status bar, a run queue, export of every panel. Training and landscapes run on worker
// threads; this class only builds specs and shows values, so the GUI thread never blocks. Its
// parts live in their own files: ExperimentForm, RunQueue, LiveCurves, RunStatusBar, LabActions
// (menus); the window reads and writes its settings in one pair (readSettings/writeSettings).
#pragma once
#include <QMainWindow>
#include <QString>
#include <QStringList>
#include <QVector>
#include <memory>
#include <nlohmann/json.hpp>

#include "experiment_form.h"
#include "live_curves.h"
#include "run_queue.h"
#include "run_status_bar.h"
#include "run_view.h"
#include "session_values.h"

class QDockWidget;
class QSplitter;

namespace liftlab {

class LabActions;
class LiveActions;
class LossCurvePanel;
class RunControls;
class RunMonitor;
class RunHistoryPanel;
class SpecEditor;
class TrainingSession;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    LossCurvePanel* curvePanel() const { return view_->curves(); }
    RunView* runView() const { return view_; }
    RunHistoryPanel* history() const { return historyPanel_; }
    SpecEditor* specEditor() const { return form_->specEditor(); }
    TrainingSession* session() const { return session_; }

    // Loads a built-in preset into the form; false for an unknown name.
    bool selectPreset(const QString& name) { return form_->selectPreset(name); }
    void setSteps(int steps) { form_->setSteps(steps); }
    QString outputDir() const { return form_->outputDir(); }
    void setOutputDir(const QString& dir);
    // The method checkboxes of the current preset, by label.
    QStringList methodLabels() const { return form_->methodLabels(); }
    void setMethodChecked(const QString& label, bool checked) {
        form_->setMethodChecked(label, checked);
    }

    // Builds the spec from the form and starts it; a bad form leaves a message in the status bar
    // and starts nothing.
    void startRun();
    void stopRun();
    // Pauses or resumes the running experiment (nothing is lost; Stop still works).
    void togglePause();
    // Adds the form's experiment to the queue; starts it at once when nothing runs. False when
    // the form is invalid (the status bar says why).
    bool queueRun();
    int queuedRuns() const { return queue_->size(); }

    // Shows a finished run folder in every panel and loads its spec into the form (it is the
    // source of truth: Start or Re-run repeats it); with `compareDir`, compares the two. False
    // (and a message) when it is not a readable run folder.
    bool openRun(const QString& runDir, const QString& compareDir = QString());
    // Two or three run folders compared (run A first): each method keeps its colour, the runs
    // differ by line style and an A/B/C tag; every tab compares or says it cannot.
    bool compareRuns(const QStringList& runDirs);
    QString openedRun() const { return openedRun_; }
    // The compared run folders (empty unless comparing).
    QStringList comparedRuns() const { return compared_; }
    // A `.liftlab-compare` file: saved from the shown comparison, or opened. False with a message.
    bool saveComparisonFile(const QString& file);
    bool openComparisonFile(const QString& file);
    // Runs the opened run (run A of a comparison) again, exactly as its spec.json says, into the
    // output folder.
    bool rerun();
    // Continues the opened or last run (a killed, stopped or failed run folder with saved
    // states) exactly as `liftlab-cli run --resume DIR`: on the worker, with live curves, Stop
    // works. False (and a message) when it cannot be resumed; the Resume run action says why.
    bool resumeRun();
    // "Fork from step N…" (the curves' right-click menu): loads the shown run's spec into the
    // form as a fork after its latest kept state at or before `step` (shown in the form); the
    // user changes settings or methods and Start runs the child on the worker, as
    // `liftlab-cli run --fork DIR --from-step N` does. False (and a message) when the shown run
    // cannot be forked (fork_offer.h) or a run is going on.
    bool forkFromStep(int step);
    RunControls* runControls() const { return controls_; }
    // Change setting… and Push into the shoulder… on the running run (live_actions.h).
    LiveActions* liveActions() const { return live_; }
    ExperimentForm* form() const { return form_; }

    // Exports: the current panel (format by extension), all panels into a folder, the shown
    // curves as CSV, the current plot to the clipboard. PNG pixel size = widget size × dpi / 96.
    bool exportCurrentPanel(const QString& path) { return view_->exportCurrent(path); }
    QStringList exportAllPanels(const QString& dir, const QString& format) {
        return view_->exportAllShown(dir, format);
    }
    bool exportCurvesCsv(const QString& path);
    void copyPlotToClipboard();
    void setExportDpi(int dpi);
    int exportDpi() const { return exportDpi_; }

    void setDarkPalette(bool on);

    // The metric the curve panel shows (test_loss by default); any metric the run logs.
    void showMetric(const QString& metric);
    QString shownMetric() const { return curves_->metric(); }

    QString lastRunDir() const { return lastRunDir_; }
    QString statusText() const { return status_->text(); }
    void showMessage(const QString& text, bool error = false) { status_->showMessage(text, error); }

Q_SIGNALS:
    // After the window has shown the outcome of a run (finished or failed).
    void runEnded(bool ok);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    QWidget* buildSidePanel();
    void buildHistoryDock();
    void connectSession();
    void readSettings();
    void writeSettings() const;
    bool buildSpec(nlohmann::json* spec, QString* title);
    void startSpec(const nlohmann::json& spec, const QString& outDir, const QString& title);
    void startNextQueued();
    void saveSession() const;
    void restoreSession();
    void setRunning(bool running);

    // After RunMonitor has shown a run's outcome.
    void onRunEnded(bool ok, const QString& runDir, bool curvesFromFolder);
    bool showRuns(const QStringList& runDirs);
    void updateStartState();
    // The Resume run action follows lastRunDir_ (the opened run or the run that just ended).
    void updateResumeState();
    // The curves offer "Fork from step N…" for the one run shown (disabled, saying why, when it
    // kept no fork states), not while a run goes on nor for a comparison.
    void updateForkOffer();

    TrainingSession* session_ = nullptr;
    RunView* view_ = nullptr;
    std::unique_ptr<LiveCurves> curves_;
    ExperimentForm* form_ = nullptr;
    RunQueue* queue_ = nullptr;
    RunStatusBar* status_ = nullptr;
    LabActions* actions_ = nullptr;
    LiveActions* live_ = nullptr;
    RunHistoryPanel* historyPanel_ = nullptr;
    QDockWidget* historyDock_ = nullptr;
    QSplitter* splitter_ = nullptr;
    RunControls* controls_ = nullptr;
    RunMonitor* monitor_ = nullptr;
    QString openedRun_;
    QStringList compared_;
    QString lastRunDir_;
    int exportDpi_ = 144;
    bool dark_ = false;
};

}  // namespace liftlab
