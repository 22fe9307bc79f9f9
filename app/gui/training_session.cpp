#include "training_session.h"

#include <QDir>
#include <QFileInfo>
#include <QThread>
#include <exception>

#include "core/bounded_input.h"
#include "core/c_numbers.h"
#include "core/error_text.h"
#include "run/folder_lock.h"
#include "run/run_files.h"
#include "training/resume.h"
#include "training/runner.h"
#include "worker_priority.h"

namespace liftlab {

namespace {

constexpr int kDrainIntervalMs = 33;  // ~30 redraws a second at most, however fast the engine

// "cf-prox.lambda=10", "push.readout=0.33,depth=-4" (the --event form without the step).
QString eventText(const RunEvent& e) {
    QString text = QString::fromStdString(e.method + "." + e.key + "=" + c_shortest(e.value));
    if (e.method == "push")
        text += QStringLiteral(",depth=") + QString::fromStdString(c_shortest(e.depth));
    return text;
}

}  // namespace

QString TrainingSession::sendEvent(const RunEvent& event, int* id) {
    if (!thread_ || !live_) return tr("no run is going on");
    try {
        check_live_event(spec_, event);
    } catch (const std::exception& e) {
        return QString::fromStdString(error_message(e));
    }
    const int given = live_->submit(event);
    if (id) *id = given;
    return QString();
}

QString TrainingSession::liveRunDir() const {
    return live_ && thread_ ? QString::fromStdString(live_->run_dir()) : QString();
}

std::map<std::string, std::map<std::string, double>> TrainingSession::liveSettings() const {
    return live_ ? live_->settings() : std::map<std::string, std::map<std::string, double>>{};
}

TrainingSession::TrainingSession(QObject* parent) : QObject(parent) {
    qRegisterMetaType<liftlab::SessionPoint>();
    qRegisterMetaType<liftlab::SessionStatus>();
    qRegisterMetaType<liftlab::SessionSpectrum>();
    qRegisterMetaType<liftlab::SessionTrace>();
    qRegisterMetaType<liftlab::SessionEvent>();
    qRegisterMetaType<liftlab::SessionEventOutcome>();
    drainTimer_.setSingleShot(true);
    drainTimer_.setInterval(kDrainIntervalMs);
    connect(&drainTimer_, &QTimer::timeout, this, &TrainingSession::drain);
}

TrainingSession::~TrainingSession() {
    if (thread_) {
        stop_ = true;
        resume();
        thread_->quit();
        thread_->wait();
    }
}

bool TrainingSession::start(const ExperimentSpec& spec, const QString& outDir) {
    return launch(spec, outDir, QString());
}

bool TrainingSession::startResume(const ExperimentSpec& spec, const QString& runDir) {
    // As the CLI: the run writes into its own folder, whose parent stands for the output folder.
    const QString dir = QDir::cleanPath(QFileInfo(runDir).absoluteFilePath());
    return launch(spec, QFileInfo(dir).path(), dir);
}

QString TrainingSession::whyNotResumable(const QString& runDir) {
    if (runDir.isEmpty()) return tr("no run is opened or was run");
    const QDir dir(runDir);
    const QString name = dir.dirName();
    if (!dir.exists(QLatin1String(run_folder::kSummary)))
        return tr("%1 has no %2").arg(name, QLatin1String(run_folder::kSummary));
    std::string status;
    try {
        status = read_summary_json(dir.filePath(QLatin1String(run_folder::kSummary)).toStdString())
                     .status;
    } catch (const std::exception& e) {
        return tr("%1: %2").arg(name, QString::fromStdString(error_message(e)));
    }
    const auto parsed = parse_run_status(status);
    if (!parsed)
        return tr("%1 has an unknown status '%2'").arg(name, QString::fromStdString(status));
    if (*parsed != RunStatus::Running && *parsed != RunStatus::Failed &&
        *parsed != RunStatus::Cancelled)
        return tr("%1 finished (status %2): nothing to resume")
            .arg(name, QString::fromStdString(status));
    try {
        if (!resumable_spec(runDir.toStdString()).save_state)
            return tr("%1 was run with save_state off: it saved no state to resume from").arg(name);
    } catch (const std::exception& e) {
        return tr("%1: %2").arg(name, QString::fromStdString(error_message(e)));
    }
    const QDir states(dir.filePath(QLatin1String(run_folder::kResume)));
    if (states.entryList({QStringLiteral("unit*.state")}, QDir::Files).isEmpty())
        return tr("%1 saved no unit state yet (it stopped before its first log point)").arg(name);
    // A folder that says "running" is a killed run (resumable) unless a process still holds
    // its lock (resume/lock: a live liftlab-cli or window writes it).
    if (*parsed == RunStatus::Running) {
        try {
            const FolderLock probe(runDir.toStdString());
        } catch (const std::exception& e) {
            return tr("%1 is still running in another process (%2)")
                .arg(name, QString::fromStdString(error_message(e)));
        }
    }
    return QString();
}

bool TrainingSession::launch(const ExperimentSpec& spec, const QString& outDir,
                             const QString& resumeDir) {
    if (thread_) return false;
    stop_ = false;
    paused_ = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        buffer_ = Buffer{};
        buffer_.totalSteps = spec.steps;
    }
    spec_ = spec;
    // Changes sent in while it runs: the callbacks run on the worker and only buffer.
    live_ = std::make_shared<LiveEvents>();
    live_->on_outcome([this](const LiveEvents::Outcome& o) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            buffer_.outcomes.push_back(
                {o.id, o.event.step, eventText(o.event), QString::fromStdString(o.error)});
        }
        requestDrain();
    });
    live_->on_applied([this](const std::vector<AppliedEvent>& rows) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (const auto& r : rows)
                buffer_.events.push_back({r.step, QString::fromStdString(r.method), r.seed,
                                          QString::fromStdString(r.key), r.old_value, r.new_value});
        }
        requestDrain();
    });
    RunOptions options;
    options.out_dir = outDir.toStdString();
    options.live_events = live_;
    options.stop = &stop_;
    // Pause: the worker waits before its next step until resume() or stop().
    options.before_step = [this] {
        if (!paused_.load()) return;
        std::unique_lock<std::mutex> lock(mutex_);
        resumed_.wait(lock, [this] { return !paused_.load() || stop_.load(); });
    };

    // Runs on the worker. Captures copies (spec, options) and `this`, which outlives the thread
    // because the destructor waits for it.
    auto work = [this, spec, options, resume = resumeDir.toStdString()]() mutable {
        lowerCurrentThreadPriority();  // the window's thread comes first
        auto onProgress = [this](const ProgressUpdate& u) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                for (const auto& p : u.points)
                    buffer_.points.push_back({p.step, QString::fromStdString(p.method), p.seed,
                                              QString::fromStdString(p.metric), p.value});
                for (const auto& s : u.statuses)
                    buffer_.statuses.push_back({QString::fromStdString(s.method), s.seed, s.status,
                                                s.step, QString::fromStdString(s.reason)});
                for (const auto& sp : u.spectra)
                    buffer_.spectra.push_back(
                        {sp.step, QString::fromStdString(sp.method), sp.seed,
                         QVector<double>(sp.singular_values.begin(), sp.singular_values.end())});
                for (const auto& t : u.traces)
                    buffer_.traces.push_back(
                        {t.step, QString::fromStdString(t.method), t.seed, t.coordinate, t.value});
                buffer_.fraction = u.fraction;
                buffer_.step = u.phase == "data" ? -1 : u.step;  // -1: still preparing data
                buffer_.totalSteps = u.total_steps;
                buffer_.workers.clear();
                for (const auto& w : u.workers)
                    buffer_.workers << QStringLiteral("seed %1/%2 step %L3 / %L4")
                                           .arg(w.seed_index + 1)
                                           .arg(u.num_seeds)
                                           .arg(w.step)
                                           .arg(w.total_steps);
                buffer_.progressChanged = true;
            }
            requestDrain();
            return !stop_.load();
        };
        QString status, runDir, error;
        try {
            // Reading the states and cutting the CSV files back may take a while: here, not on
            // the GUI thread.
            if (!resume.empty()) options.resume = prepare_resume(resume, spec);
            const RunResult r = run_experiment(spec, options, onProgress);
            status = QString::fromLatin1(to_string(r.status));
            runDir = QString::fromStdString(r.run_dir);
        } catch (const std::exception& e) {
            // SpecError / DataError carry the key or file:line; torch errors their own text.
            error = QString::fromStdString(error_message(e));
            if (error.isEmpty()) error = QStringLiteral("the run failed");
        } catch (...) {
            error = QStringLiteral("the run failed with an unknown error");
        }
        std::lock_guard<std::mutex> lock(mutex_);
        buffer_.done = true;
        buffer_.resultStatus = status;
        buffer_.runDir = runDir;
        buffer_.error = error;
    };

    thread_.reset(QThread::create(work));
    thread_->setObjectName(QStringLiteral("liftlab-training"));
    // Queued to this (GUI-thread) object: the last drain and finished() happen here.
    connect(thread_.get(), &QThread::finished, this, &TrainingSession::onThreadFinished,
            Qt::QueuedConnection);
    thread_->start();
    return true;
}

void TrainingSession::stop() {
    stop_ = true;
    {
        std::lock_guard<std::mutex> lock(mutex_);  // no lost wake-up of a paused worker
    }
    resumed_.notify_all();
}

void TrainingSession::pause() {
    if (!thread_ || paused_.exchange(true)) return;
    Q_EMIT pausedChanged(true);
}

void TrainingSession::resume() {
    if (!paused_.exchange(false)) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);  // no lost wake-up between check and wait
    }
    resumed_.notify_all();
    Q_EMIT pausedChanged(false);
}

void TrainingSession::requestDrain() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (buffer_.drainRequested) return;  // one pending drain serves all updates until then
        buffer_.drainRequested = true;
    }
    // The timer belongs to the GUI thread, so it is started there.
    QMetaObject::invokeMethod(
        this,
        [this] {
            if (!drainTimer_.isActive()) drainTimer_.start();
        },
        Qt::QueuedConnection);
}

void TrainingSession::drain() {
    Buffer taken;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        taken.points.swap(buffer_.points);
        taken.statuses.swap(buffer_.statuses);
        taken.spectra.swap(buffer_.spectra);
        taken.traces.swap(buffer_.traces);
        taken.events.swap(buffer_.events);
        taken.outcomes.swap(buffer_.outcomes);
        taken.fraction = buffer_.fraction;
        taken.step = buffer_.step;
        taken.totalSteps = buffer_.totalSteps;
        taken.workers = buffer_.workers;
        taken.progressChanged = buffer_.progressChanged;
        buffer_.progressChanged = false;
        buffer_.drainRequested = false;
    }
    // Signals go out without the lock, so slots may take their time.
    if (!taken.points.isEmpty()) Q_EMIT pointsArrived(taken.points);
    if (!taken.spectra.isEmpty()) Q_EMIT spectraArrived(taken.spectra);
    if (!taken.traces.isEmpty()) Q_EMIT tracesArrived(taken.traces);
    for (const auto& s : std::as_const(taken.statuses)) Q_EMIT statusChanged(s);
    for (const auto& o : std::as_const(taken.outcomes)) Q_EMIT eventOutcome(o);
    if (!taken.events.isEmpty()) Q_EMIT eventsApplied(taken.events);
    if (taken.progressChanged) {
        Q_EMIT workersChanged(taken.workers);
        Q_EMIT progress(taken.fraction, taken.step, taken.totalSteps);
    }
}

void TrainingSession::onThreadFinished() {
    if (!thread_) return;
    thread_->wait();  // finished() is emitted just before run() returns
    thread_.reset();
    paused_ = false;
    drainTimer_.stop();
    drain();
    QString status, runDir, error;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        status = buffer_.resultStatus;
        runDir = buffer_.runDir;
        error = buffer_.error;
    }
    if (!error.isEmpty())
        Q_EMIT failed(error);
    else
        Q_EMIT finished(status, runDir);
}

}  // namespace liftlab
