// GUI responsiveness (issue "The visual lab"): while the window trains 4 methods live
// (cf-regression: adam, sgd, cf-ridge, cf-prox), a 5 ms timer on the GUI thread measures how late
// it fires; the longest lateness is the longest event-loop stall a user could feel (target:
// < 20 ms). Then curves of 10⁶ points: time of a full replot of the curve panel (target: < 30 ms).
// usage: liftlab-bench-gui [seconds=15] [dense.png]   (offscreen by default)
// Prints JSON lines (bench/bench_record.h): case "event_loop" (the lateness), "panel_replot" (each
// panel's longest replot, to tell which redraw a stall comes from) and "curve_replot" (the 10⁶
// points); threads 0: the window's own default. LIFTLAB_BENCH_REPLOTS=1 lists every replot over
// 10 ms on stderr. With LIFTLAB_BENCH_SMOKE the curves have 4 × 2 500 points and 2 replots.
#include <qcustomplot.h>
#include <QApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>
#include <QVector>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "bench_record.h"
#include "bench_timer.h"
#include "core/allocator_tuning.h"
#include "loss_curve_panel.h"
#include "main_window.h"
#include "passive_openmp.h"
#include "settings_scope.h"
#include "training_session.h"

namespace {

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * (v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
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
    std::vector<double> lateness;
    QElapsedTimer clock;
    constexpr int kTickMs = 5;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    qint64 last = 0;
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (last > 0) lateness.push_back(std::max(0.0, (now - last) / 1e6 - kTickMs));
        last = now;
    });
    int points = 0;
    QObject::connect(window.session(), &liftlab::TrainingSession::pointsArrived,
                     [&](const QVector<liftlab::SessionPoint>& p) { points += p.size(); });
    // The longest replot of every plot in the window (QCustomPlot measures its own), to tell
    // which redraw a stall comes from.
    std::map<QString, double> longestReplot;
    for (QCustomPlot* plot : window.findChildren<QCustomPlot*>()) {
        QString name;
        for (QObject* o = plot; o && name.isEmpty(); o = o->parent())
            if (!QString::fromLatin1(o->metaObject()->className()).startsWith(QLatin1String("Q")))
                name = QString::fromLatin1(o->metaObject()->className());
        QObject::connect(plot, &QCustomPlot::afterReplot, [&, plot, name] {
            double& worst = longestReplot[name];
            worst = std::max(worst, plot->replotTime(false));
            if (std::getenv("LIFTLAB_BENCH_REPLOTS") && plot->replotTime(false) > 10) {
                int n = 0, graphs = 0;
                for (int i = 0; i < plot->graphCount(); ++i)
                    if (plot->graph(i)->visible()) {
                        n += plot->graph(i)->dataCount();
                        ++graphs;
                    }
                std::fprintf(stderr, "replot %s %.1f ms at %.2f s: %d graphs, %d points\n",
                             qPrintable(name), plot->replotTime(false), clock.nsecsElapsed() / 1e9,
                             graphs, n);
            }
        });
    }
    window.startRun();
    clock.start();
    tick.start(kTickMs);
    QTimer::singleShot(static_cast<int>(seconds * 1000), [&] {
        tick.stop();
        window.stopRun();
    });
    QObject::connect(&window, &liftlab::MainWindow::runEnded, &app, &QApplication::quit);
    app.exec();
    const double worst =
        lateness.empty() ? NAN : *std::max_element(lateness.begin(), lateness.end());
    liftlab::bench::print_record("liftlab-bench-gui", "event_loop", "", 0,
                                 {{"preset", "cf-regression"},
                                  {"methods", 4},
                                  {"seconds", seconds},
                                  {"tick_ms", kTickMs},
                                  {"points_plotted", points}},
                                 {{"median_lateness_ms", percentile(lateness, 0.5)},
                                  {"p99_lateness_ms", percentile(lateness, 0.99)},
                                  {"longest_stall_ms", worst}});
    for (const auto& [name, ms] : longestReplot)
        liftlab::bench::print_record("liftlab-bench-gui", "panel_replot", "", 0,
                                     {{"panel", name.toStdString()}, {"seconds", seconds}},
                                     {{"longest_replot_ms", ms}});

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
