// GUI responsiveness (issue "The visual lab"): while the window trains 4 methods live
// (cf-regression: adam, sgd, cf-ridge, cf-prox), a 5 ms timer on the GUI thread measures how late
// it fires; the longest lateness is the longest event-loop stall a user could feel (target:
// < 20 ms). Then (issue 40) the same window forks a finished ICNN run ("Fork from step N…") and,
// while the fork trains, computes "Landscape at this step" on the landscape worker: the lateness
// while both compute (same target). Last, curves of 10⁶ points: time of a full replot of the
// curve panel (target: < 30 ms).
// usage: liftlab-bench-gui [seconds=15] [dense.png]   (offscreen by default)
// Prints JSON lines (bench/bench_record.h): case "event_loop" (the lateness), "panel_replot" (each
// panel's longest replot, wall and GUI-thread CPU time, to tell which redraw a stall comes from),
// "event_loop_fork_landscape" and "panel_replot_fork_landscape" (the same while the fork and the
// landscape compute, with the times each started and ended: the overlap is checked, exit 1 when
// it did not happen) and "curve_replot" (the 10⁶ points); threads 0: the window's own default.
// The longest stall is taken apart (Linux schedstat): how long the GUI thread ran in it (its own
// work) and how long it waited, runnable, for a core (the machine's load); longest_gui_run_ms is
// the most CPU the GUI thread spent between two ticks, gui_cpu_ratio its CPU time over the
// measured wall time. LIFTLAB_BENCH_REPLOTS=1 lists every replot
// and every late or busy tick over 10 ms on stderr, where the fork's timeline is printed too.
// LIFTLAB_BENCH_RT=1 runs the GUI thread alone at real-time priority (param gui_sched "rr1",
// else "other"): what lateness is left is the window's own, the machine's load taken out.
// With LIFTLAB_BENCH_SMOKE the curves have 4 × 2 500 points and 2 replots, the fork's parent 100
// steps and its landscape 9 × 9 (θ) and 7 × 7 (lifted) cells.
#include <qcustomplot.h>
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QMenu>
#include <QSet>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QVector>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#if defined(__linux__)
#include <sched.h>
#endif
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench_record.h"
#include "bench_timer.h"
#include "core/allocator_tuning.h"
#include "landscape_page.h"
#include "live_actions.h"
#include "loss_curve_panel.h"
#include "main_window.h"
#include "passive_openmp.h"
#include "settings_scope.h"
#include "spec_editor.h"
#include "training_session.h"

namespace {

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * (v.size() - 1))];
}

constexpr int kTickMs = 5;

// The GUI thread's own scheduler accounting (Linux /proc/thread-self/schedstat): the CPU time it
// ran and the time it waited, runnable, for a core (ns); zeros elsewhere.
struct ThreadSched {
    long long ranNs = 0, waitedNs = 0;
};
ThreadSched readThreadSched() {
    ThreadSched t;
    if (std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r")) {
        if (std::fscanf(f, "%lld %lld", &t.ranNs, &t.waitedNs) != 2) t = {};
        std::fclose(f);
    }
    return t;
}

// The calling thread's CPU time (ms).
double threadCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// A panel's longest replot: wall time (QCustomPlot's own measure) and the GUI thread's CPU time.
struct ReplotTimes {
    double wallMs = 0, cpuMs = 0;
};

// One tick of the GUI-thread timer: when it fired, how late (ms past its 5 ms period), and since
// the previous tick how long the GUI thread ran (its own work) and waited for a core (the
// machine's load): a stall with little of either was the thread blocked (a lock, the disk).
struct Tick {
    qint64 at = 0;
    double lateMs = 0, ranMs = 0, waitedMs = 0;
};

// The lateness of a set of ticks, with the longest stall taken apart.
nlohmann::ordered_json latenessResults(const std::vector<Tick>& ticks) {
    std::vector<double> late;
    double busiest = 0, ran = 0, wall = 0;
    const Tick* worst = nullptr;
    for (const Tick& t : ticks) {
        late.push_back(t.lateMs);
        busiest = std::max(busiest, t.ranMs);
        ran += t.ranMs;
        wall += kTickMs + t.lateMs;
        if (!worst || t.lateMs > worst->lateMs) worst = &t;
    }
    return {{"median_lateness_ms", percentile(late, 0.5)},
            {"p99_lateness_ms", percentile(late, 0.99)},
            {"longest_stall_ms", worst ? worst->lateMs : NAN},
            {"longest_stall_gui_ran_ms", worst ? worst->ranMs : NAN},
            {"longest_stall_gui_waited_ms", worst ? worst->waitedMs : NAN},
            {"longest_gui_run_ms", ticks.empty() ? NAN : busiest},
            {"gui_cpu_ratio", wall > 0 ? ran / wall : NAN}};
}

// The GUI-thread timer and what it saw (Tick), and the longest replot of every plot in the
// window while `replots` points to a map (QCustomPlot measures its own replots), to tell which
// redraw a stall comes from.
struct StallProbe {
    QElapsedTimer clock;
    QTimer tick;
    qint64 last = 0;
    ThreadSched lastSched;
    std::vector<Tick> ticks;
    std::map<QString, ReplotTimes>* replots = nullptr;
    QSet<QCustomPlot*> watched;

    StallProbe() {
        clock.start();
        tick.setTimerType(Qt::PreciseTimer);
        QObject::connect(&tick, &QTimer::timeout, [this] {
            const qint64 now = clock.nsecsElapsed();
            const ThreadSched sched = readThreadSched();
            if (last > 0) {
                ticks.push_back({now, std::max(0.0, (now - last) / 1e6 - kTickMs),
                                 (sched.ranNs - lastSched.ranNs) / 1e6,
                                 (sched.waitedNs - lastSched.waitedNs) / 1e6});
                const Tick& t = ticks.back();
                if (std::getenv("LIFTLAB_BENCH_REPLOTS") && (t.lateMs > 10 || t.ranMs > 10))
                    std::fprintf(stderr,
                                 "tick %.1f ms late at %.2f s: the GUI thread ran %.1f ms and "
                                 "waited %.1f ms for a core\n",
                                 t.lateMs, now / 1e9, t.ranMs, t.waitedMs);
            }
            last = now;
            lastSched = sched;
        });
    }
    void start() {
        last = 0;
        tick.start(kTickMs);
    }
    void stop() { tick.stop(); }
    double seconds() const { return clock.nsecsElapsed() / 1e9; }
    // The ticks that fired in [from, to] (ns; to < 0: until now).
    std::vector<Tick> between(qint64 from, qint64 to = -1) const {
        std::vector<Tick> out;
        for (const Tick& t : ticks)
            if (t.at >= from && (to < 0 || t.at <= to)) out.push_back(t);
        return out;
    }
    // Every plot of the window (again after new panels appear).
    void watch(QWidget* window) {
        for (QCustomPlot* plot : window->findChildren<QCustomPlot*>()) {
            if (watched.contains(plot)) continue;
            watched.insert(plot);
            QString name;
            for (QObject* o = plot->parent(); o && name.isEmpty(); o = o->parent())
                if (!QString::fromLatin1(o->metaObject()->className())
                         .startsWith(QLatin1String("Q")))
                    name = QString::fromLatin1(o->metaObject()->className());
            auto cpuAtStart = std::make_shared<double>(0);
            QObject::connect(plot, &QCustomPlot::beforeReplot,
                             [cpuAtStart] { *cpuAtStart = threadCpuMs(); });
            QObject::connect(plot, &QCustomPlot::afterReplot, [this, plot, name, cpuAtStart] {
                if (!replots) return;
                ReplotTimes& worst = (*replots)[name];
                worst.wallMs = std::max(worst.wallMs, plot->replotTime(false));
                worst.cpuMs = std::max(worst.cpuMs, threadCpuMs() - *cpuAtStart);
                if (std::getenv("LIFTLAB_BENCH_REPLOTS") && plot->replotTime(false) > 10) {
                    int n = 0, graphs = 0;
                    for (int i = 0; i < plot->graphCount(); ++i)
                        if (plot->graph(i)->visible()) {
                            n += plot->graph(i)->dataCount();
                            ++graphs;
                        }
                    std::fprintf(stderr,
                                 "replot %s%s %.1f ms (%.1f ms of GUI-thread CPU) at %.2f s: "
                                 "%d graphs, %d points\n",
                                 qPrintable(name), plot->isVisible() ? "" : " (hidden)",
                                 plot->replotTime(false), threadCpuMs() - *cpuAtStart, seconds(),
                                 graphs, n);
                }
            });
        }
    }
};

// Runs the event loop (the probe's timer keeps firing) until `done` or `timeoutMs`.
bool waitFor(const std::function<bool()>& done, int timeoutMs) {
    if (done()) return true;
    QEventLoop loop;
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done()) loop.quit();
    });
    poll.start(20);
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    return done();
}

void printReplots(const char* kase, const std::map<QString, ReplotTimes>& replots, double seconds) {
    for (const auto& [name, t] : replots)
        liftlab::bench::print_record(
            "liftlab-bench-gui", kase, "", 0, {{"panel", name.toStdString()}, {"seconds", seconds}},
            {{"longest_replot_ms", t.wallMs}, {"longest_replot_cpu_ms", t.cpuMs}});
}

bool failed(const QString& why) {
    std::fprintf(stderr, "liftlab-bench-gui: fork + landscape case: %s\n", qPrintable(why));
    return false;
}

// 2. A fork and a landscape beside the live run. The window trains one run at a time (one
// TrainingSession: "Fork from step N…" is refused while a run goes on, a second Start queues),
// so the live run is the fork itself: an ICNN run (icnn-landscape: lifter, softplus, pgd) that
// kept fork states is finished, opened and forked from its curves' right-click menu ("Fork from
// step N…", Start: the child trains on the session's worker from the parent's states); while it
// trains, "Landscape at this step" computes its θ and lifted landscapes on the landscape worker.
// The lateness is taken while both run: from the landscape's start to 300 ms after its end (its
// result drawn), the fork checked to train (log points arriving) throughout; then the fork is
// stopped. False (and why on stderr) when the overlap did not happen.
bool forkLandscapeCase(liftlab::MainWindow& window, StallProbe& probe,
                       const std::string& guiSched) {
    using liftlab::MainWindow;
    const bool smoke = liftlab::bench::smoke();
    const int parentSteps = smoke ? 100 : 300;  // log_every 50: fork states at 50, 100, …
    const int askedStep = smoke ? 60 : 250;
    const int gridTheta = smoke ? 9 : 41, gridLifted = smoke ? 7 : 25;  // 41/25: the defaults
    constexpr int kLongMs = 600000;
    constexpr int kAfterLandscapeMs = 300;  // the fork trains on a little after the landscape

    if (!window.isVisible()) return failed("the window is not shown");
    // The parent: fork states at every log point, run to its end in the window (not measured).
    if (!window.selectPreset(QStringLiteral("icnn-landscape"))) return failed("no preset");
    window.setSteps(parentSteps);
    if (!window.specEditor()->setValue(QStringLiteral("fork_state_every"), QStringLiteral("1")))
        return failed("the form lists no fork_state_every");
    liftlab::TrainingSession* session = window.session();
    window.startRun();
    if (!session->isRunning()) return failed("the parent did not start: " + window.statusText());
    if (!waitFor([&] { return !session->isRunning(); }, kLongMs))
        return failed("the parent did not finish");
    const QString parent = QDir::cleanPath(window.lastRunDir());
    if (!window.openRun(parent)) return failed("cannot open the parent: " + window.statusText());

    // "Fork from step N…" from the curves' menu, as a user right-clicks at step N.
    std::unique_ptr<QMenu> menu(window.curvePanel()->createContextMenu(&window, askedStep));
    QAction* forkAction = nullptr;
    for (QAction* a : menu->actions())
        if (a->objectName() == QLatin1String("forkFromStep")) forkAction = a;
    if (!forkAction || !forkAction->isEnabled())
        return failed("no enabled \"Fork from step N…\": " +
                      (forkAction ? forkAction->toolTip() : QStringLiteral("no action")));
    forkAction->trigger();
    if (window.form()->forkParent() != parent)
        return failed("the form is not a fork of the parent: " + window.statusText());
    const int forkStep = window.form()->forkStep();
    window.setSteps(1000000);  // the child trains until it is stopped
    auto* page = window.runView()->landscapeTab();
    if (auto* g = page->findChild<QSpinBox*>(QStringLiteral("landscapeGridTheta")))
        g->setValue(gridTheta);
    if (auto* g = page->findChild<QSpinBox*>(QStringLiteral("landscapeGridLifted")))
        g->setValue(gridLifted);

    // The timeline (ns on the probe's clock).
    // The measured window: from the landscape's start to a little after its end (its result
    // drawn), the fork training throughout.
    qint64 firstPoint = -1, landscapeStart = -1, landscapeEnd = -1, measuredEnd = -1, forkEnd = -1;
    int pointsDuring = 0, progressDuring = 0;
    bool landscapeOk = false, trainingAtMeasuredEnd = false;
    std::map<QString, ReplotTimes> replots;
    QTimer stopLater;
    stopLater.setSingleShot(true);
    QObject::connect(&stopLater, &QTimer::timeout, [&] {
        measuredEnd = probe.clock.nsecsElapsed();
        probe.replots = nullptr;
        trainingAtMeasuredEnd = session->isRunning() && !session->isPaused();
        window.stopRun();
    });
    QList<QMetaObject::Connection> links;
    links << QObject::connect(session, &liftlab::TrainingSession::pointsArrived,
                              [&](const QVector<liftlab::SessionPoint>& p) {
                                  if (firstPoint < 0) firstPoint = probe.clock.nsecsElapsed();
                                  if (landscapeStart >= 0 && measuredEnd < 0)
                                      pointsDuring += p.size();
                              });
    links << QObject::connect(page, &liftlab::LandscapePage::progress, [&](double) {
        if (landscapeStart >= 0 && landscapeEnd < 0) ++progressDuring;
    });
    links << QObject::connect(page, &liftlab::LandscapePage::done, [&](const QString& m, bool ok) {
        if (landscapeStart < 0 || landscapeEnd >= 0) return;
        landscapeEnd = probe.clock.nsecsElapsed();
        landscapeOk = ok;
        if (!ok) failed("the landscape failed: " + m);
        stopLater.start(kAfterLandscapeMs);
    });
    links << QObject::connect(&window, &MainWindow::runEnded,
                              [&](bool) { forkEnd = probe.clock.nsecsElapsed(); });
    const auto disconnectAll = [&] {
        for (const auto& c : links) QObject::disconnect(c);
    };

    const qint64 forkStart = probe.clock.nsecsElapsed();
    probe.start();
    window.startRun();  // Start: the child run on the session's worker
    if (!session->isRunning()) {
        disconnectAll();
        return failed("the fork did not start: " + window.statusText());
    }
    // "Landscape at this step" once the fork trains and has written its first trajectory (its
    // folder's trajectories/: the plane through the latest checkpoint).
    const bool started = waitFor(
        [&] {
            if (firstPoint < 0 || !session->isRunning()) return firstPoint >= 0;
            const QString dir = session->liveRunDir();
            if (dir.isEmpty() || QDir(dir + QStringLiteral("/trajectories"))
                                     .entryList({QStringLiteral("*.pt")}, QDir::Files)
                                     .isEmpty())
                return false;
            window.liveActions()->landscapeNowAction()->trigger();
            if (!page->isComputing()) return false;
            landscapeStart = probe.clock.nsecsElapsed();
            probe.watch(&window);
            probe.replots = &replots;
            return true;
        },
        kLongMs);
    if (!started || landscapeStart < 0) {
        window.stopRun();
        waitFor([&] { return !session->isRunning(); }, kLongMs);
        disconnectAll();
        return failed("the landscape did not start beside the fork: " + window.statusText());
    }
    waitFor([&] { return landscapeEnd >= 0; }, kLongMs);
    if (landscapeEnd < 0) window.stopRun();  // (else stopLater stops it)
    waitFor([&] { return !session->isRunning(); }, kLongMs);
    probe.stop();
    disconnectAll();
    if (!window.isVisible()) return failed("the window was closed during the case");

    const auto at = [&](qint64 ns) { return ns < 0 ? NAN : (ns - forkStart) / 1e9; };
    std::fprintf(stderr,
                 "fork of %s after step %d: started 0 s, first log point %.2f s, ended %.2f s; "
                 "landscape (θ grid %d, lifted grid %d) %.2f → %.2f s, %d progress reports; "
                 "measured %.2f → %.2f s, %d fork log points in it\n",
                 qPrintable(QFileInfo(parent).fileName()), forkStep, at(firstPoint), at(forkEnd),
                 gridTheta, gridLifted, at(landscapeStart), at(landscapeEnd), progressDuring,
                 at(landscapeStart), at(measuredEnd), pointsDuring);
    // The overlap, checked: the fork trained before the landscape began, was still training at
    // the end of the measured window (and logged points meanwhile), and the landscape worker
    // computed, reported and finished inside the window.
    if (landscapeEnd < 0) return failed("the landscape did not finish");
    if (!landscapeOk) return false;
    if (firstPoint < 0 || firstPoint > landscapeStart)
        return failed("the fork logged no point before the landscape began");
    if (measuredEnd < 0 || !trainingAtMeasuredEnd || forkEnd < measuredEnd)
        return failed("the fork was no longer training at the end of the measured window");
    if (pointsDuring == 0) return failed("the fork logged no point during the measured window");
    if (progressDuring == 0) return failed("the landscape worker reported no progress");

    nlohmann::ordered_json results = latenessResults(probe.between(landscapeStart, measuredEnd));
    const double measured = (measuredEnd - landscapeStart) / 1e9;
    results.update(nlohmann::ordered_json{{"measured_s", measured},
                                          {"fork_first_point_s", at(firstPoint)},
                                          {"landscape_started_s", at(landscapeStart)},
                                          {"landscape_finished_s", at(landscapeEnd)},
                                          {"measured_until_s", at(measuredEnd)},
                                          {"fork_ended_s", at(forkEnd)}});
    liftlab::bench::print_record("liftlab-bench-gui", "event_loop_fork_landscape", "", 0,
                                 {{"preset", "icnn-landscape"},
                                  {"methods", 3},
                                  {"fork_step", forkStep},
                                  {"grid_theta", gridTheta},
                                  {"grid_lifted", gridLifted},
                                  {"tick_ms", kTickMs},
                                  {"points_plotted", pointsDuring},
                                  {"gui_sched", guiSched}},
                                 results);
    printReplots("panel_replot_fork_landscape", replots, measured);
    return true;
}

// LIFTLAB_BENCH_RT=1: the GUI thread alone at real-time priority (SCHED_RR 1; threads it starts
// are reset to normal scheduling), so that it gets a core whenever it wakes: the lateness left is
// the window's own work, without the machine's load. "other" (the default) or "rr1".
std::string guiSchedPolicy() {
    if (!std::getenv("LIFTLAB_BENCH_RT")) return "other";
#if defined(__linux__)
    sched_param p{};
    p.sched_priority = 1;
    if (sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &p) == 0) return "rr1";
#endif
    std::fprintf(stderr, "liftlab-bench-gui: LIFTLAB_BENCH_RT: real-time priority refused\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    const std::string guiSched = guiSchedPolicy();  // before any thread is started
    liftlab::ensure_passive_openmp(argv);
    liftlab::tune_allocator();  // as the liftlab GUI does
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    // The window reads and writes QSettings: a folder of the benchmark's own, never the user's.
    const QTemporaryDir settings;
    liftlab::useSettingsFolder(settings.path());
    QApplication app(argc, argv);
    const double seconds = argc > 1 ? std::atof(argv[1]) : 15.0;

    // 1. Event-loop stalls while 4 methods train.
    QTemporaryDir out;
    liftlab::MainWindow window;
    window.resize(1400, 900);
    window.show();
    window.selectPreset("cf-regression");
    window.setSteps(1000000);
    window.setOutputDir(out.path());
    StallProbe probe;
    int points = 0;
    const auto counting =
        QObject::connect(window.session(), &liftlab::TrainingSession::pointsArrived,
                         [&](const QVector<liftlab::SessionPoint>& p) { points += p.size(); });
    std::map<QString, ReplotTimes> longestReplot;
    probe.watch(&window);
    probe.replots = &longestReplot;
    window.startRun();
    const qint64 begin = probe.clock.nsecsElapsed();
    probe.start();
    QTimer::singleShot(static_cast<int>(seconds * 1000), [&] {
        probe.stop();
        probe.replots = nullptr;
        window.stopRun();
    });
    {
        // Not app.exec() and quit(): Qt 6's quit closes every window, and the window goes on.
        QEventLoop loop;
        QObject::connect(&window, &liftlab::MainWindow::runEnded, &loop, &QEventLoop::quit);
        loop.exec();
    }
    QObject::disconnect(counting);
    liftlab::bench::print_record("liftlab-bench-gui", "event_loop", "", 0,
                                 {{"preset", "cf-regression"},
                                  {"methods", 4},
                                  {"seconds", seconds},
                                  {"tick_ms", kTickMs},
                                  {"points_plotted", points},
                                  {"gui_sched", guiSched}},
                                 latenessResults(probe.between(begin)));
    printReplots("panel_replot", longestReplot, seconds);

    // 2. A fork and a landscape beside the live run, in the same window.
    if (!forkLandscapeCase(window, probe, guiSched)) return 1;

    // 2. Redraw of 10⁶-point curves (4 methods × 250 000 points), full replot.
    liftlab::LossCurvePanel panel;
    panel.resize(1200, 700);
    panel.show();
    std::mt19937 rng(1);
    std::normal_distribution<double> noise(0.0, 0.05);
    const int n = liftlab::bench::smoke() ? 2500 : 250000;
    const int runs = liftlab::bench::smoke() ? 2 : 20;
    for (const char* m : {"adam", "sgd", "cf-ridge", "cf-prox"}) {
        QVector<double> x(n), y(n);
        for (int i = 0; i < n; ++i) {
            x[i] = i;
            y[i] = std::exp(-i / 50000.0) * (1 + noise(rng)) + 0.01;
        }
        panel.appendPoints(m, x, y);
    }
    panel.rescale();
    panel.plot()->replot(QCustomPlot::rpImmediateRefresh);  // warm-up
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
        QElapsedTimer t;
        t.start();
        panel.plot()->replot(QCustomPlot::rpImmediateRefresh);
        ms.push_back(t.nsecsElapsed() / 1e6);
    }
    if (argc > 2) panel.exportTo(QString::fromLocal8Bit(argv[2]), 1200, 700);  // to look at it
    liftlab::bench::print_record(
        "liftlab-bench-gui", "curve_replot", "", 0,
        {{"points", 4 * n}, {"width", 1200}, {"height", 700}, {"runs", runs}},
        {{"median_ms", percentile(ms, 0.5)},
         {"worst_ms", *std::max_element(ms.begin(), ms.end())}});
    return 0;
}
