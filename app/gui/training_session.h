// The bridge between the GUI and the engine (DESIGN.md "Threading"): runs one experiment on a
// worker QThread and hands its progress to the GUI thread as plain values.
//
// Worker side: the progress callback only copies values into a mutex-guarded buffer and asks for
// a drain. GUI side: a single-shot timer (~33 ms) drains the buffer, so a burst of updates costs
// one round of signals and one replot. Only values cross threads, never tensors.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "session_values.h"
#include "spec/experiment_spec.h"
#include "training/live_events.h"

class QThread;

namespace liftlab {

class TrainingSession : public QObject {
    Q_OBJECT
public:
    explicit TrainingSession(QObject* parent = nullptr);
    // Stops a running experiment and waits for the worker: never leaves a thread behind.
    ~TrainingSession() override;

    // Starts `spec` writing its run folder under `outDir` (empty: nothing written). Returns
    // false when a run is still going.
    bool start(const ExperimentSpec& spec, const QString& outDir);
    // Continues the killed, stopped or failed run folder `runDir` exactly as `liftlab-cli run
    // --resume DIR` does (its spec.json, training/resume.h): the resume plan is prepared on the
    // worker, which then goes on as for start(); a folder that cannot be resumed ends in
    // failed(message). Returns false when a run is still going.
    bool startResume(const ExperimentSpec& spec, const QString& runDir);
    // Why `runDir` cannot be resumed ("" when it can): it must be a run folder whose summary.json
    // says running, failed or cancelled, run with save_state on, with unit states in resume/.
    // A folder that says running must not be held by a live process (its resume/lock free: the
    // process was killed). Reads only spec.json, summary.json and the resume/ listing, and tries
    // the lock (cheap, GUI thread).
    static QString whyNotResumable(const QString& runDir);
    // Asks the run to stop; the engine checks the flag every training step. Returns at once;
    // finished("cancelled", ...) follows.
    void stop();
    // Pause holds the worker before its next training step without losing anything; resume lets
    // it go on. stop() also releases a paused run.
    void pause();
    void resume();
    bool isPaused() const { return paused_.load(); }
    // True from start() until finished()/failed() has been emitted.
    bool isRunning() const { return thread_ != nullptr; }
    // The spec of the run going on (or of the last one).
    const ExperimentSpec& spec() const { return spec_; }

    // Sends a change into the running run (training/live_events.h): a method's live setting
    // ("cf-prox", "lambda", 10) or a push ("push", "readout", fraction, depth). Checked here as
    // parse_spec checks an --event (the error text is returned, nothing sent); then the run
    // gives it the next step every seed can take, applies it, writes it to events.csv and
    // records it in spec.json's "live_events" (so --resume and a re-run replay it).
    // eventOutcome() follows, and eventsApplied() once the seeds have applied it. Never blocks.
    QString sendEvent(const RunEvent& event, int* id = nullptr);
    // Each method's live settings as its trainer holds them now (label → key → value); empty
    // before the first step.
    std::map<std::string, std::map<std::string, double>> liveSettings() const;
    // The running run's folder once it exists ("" before, or when nothing is written).
    QString liveRunDir() const;

Q_SIGNALS:
    void pointsArrived(const QVector<liftlab::SessionPoint>& points);
    void spectraArrived(const QVector<liftlab::SessionSpectrum>& spectra);
    void tracesArrived(const QVector<liftlab::SessionTrace>& traces);
    void pausedChanged(bool paused);
    void statusChanged(const liftlab::SessionStatus& status);
    void progress(double fraction, int step, int totalSteps);
    // Where each worker is when seeds run in parallel, e.g. "seed 2/3 step 1 200 / 3 000"; one
    // entry per seed in progress (empty when the data is being prepared).
    void workersChanged(const QStringList& workers);
    // status: to_string(RunStatus) — ok | cancelled | diverged (every method diverged or failed).
    void finished(const QString& status, const QString& runDir);
    // The run could not start or broke off (bad data file, bad spec, ...).
    void failed(const QString& message);
    // A change sent with sendEvent was scheduled (outcome.step) or refused (outcome.error).
    void eventOutcome(const liftlab::SessionEventOutcome& outcome);
    // Rows of events.csv as the seeds applied them (changes sent in and the spec's events).
    void eventsApplied(const QVector<liftlab::SessionEvent>& events);

private:
    // Everything the worker writes; guarded by mutex_ (any access must hold it).
    struct Buffer {
        QVector<SessionPoint> points;
        QVector<SessionStatus> statuses;
        QVector<SessionSpectrum> spectra;
        QVector<SessionTrace> traces;
        QVector<SessionEvent> events;
        QVector<SessionEventOutcome> outcomes;
        double fraction = 0;
        int step = 0;
        int totalSteps = 0;
        QStringList workers;
        bool progressChanged = false;
        bool drainRequested = false;
        bool done = false;
        QString resultStatus, runDir, error;
    };

    // start() and startResume(): `resumeDir` empty for a new run.
    bool launch(const ExperimentSpec& spec, const QString& outDir, const QString& resumeDir);
    void requestDrain();  // worker thread
    void drain();         // GUI thread
    void onThreadFinished();

    std::unique_ptr<QThread> thread_;
    ExperimentSpec spec_;
    std::shared_ptr<LiveEvents> live_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> paused_{false};
    std::condition_variable resumed_;
    std::mutex mutex_;
    Buffer buffer_;
    QTimer drainTimer_;
};

}  // namespace liftlab
