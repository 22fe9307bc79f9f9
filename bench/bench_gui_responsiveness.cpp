// GUI responsiveness (issue "The visual lab"): while the window trains 4 methods live
// (cf-regression: adam, sgd, cf-ridge, cf-prox), a 5 ms timer on the GUI thread measures how late
// it fires; the longest lateness is the longest event-loop stall a user could feel (target:
// < 20 ms). Then curves of 10⁶ points: time of a full replot of the curve panel (target: < 30 ms).
// usage: liftlab-bench-gui [seconds=15] [dense.png]   (offscreen by default; prints two tables)
// Also printed: each panel's longest replot; LIFTLAB_BENCH_REPLOTS=1 lists every replot over 10 ms.
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
    std::printf(
        "== GUI event loop while 4 methods train (%.0f s, %zu ticks of %d ms, %d points "
        "plotted) ==\n",
        seconds, lateness.size(), kTickMs, points);
    std::printf("%-28s %10.2f ms\n", "median lateness", percentile(lateness, 0.5));
    for (const auto& [name, ms] : longestReplot)
        std::printf("  longest replot %-28s %7.2f ms\n", qPrintable(name), ms);
    std::printf("%-28s %10.2f ms\n", "99th percentile lateness", percentile(lateness, 0.99));
    const double worst =
        lateness.empty() ? NAN : *std::max_element(lateness.begin(), lateness.end());
    std::printf("%-28s %10.2f ms   (target < 20 ms: %s)\n", "longest stall", worst,
                worst < 20 ? "met" : "NOT met");

    // 2. Redraw of 10⁶-point curves (4 methods × 250 000 points), full replot.
    liftlab::LossCurvePanel panel;
    panel.resize(1200, 700);
    panel.show();
    std::mt19937 rng(1);
    std::normal_distribution<double> noise(0.0, 0.05);
    const int n = 250000;
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
    for (int r = 0; r < 20; ++r) {
        QElapsedTimer t;
        t.start();
        panel.plot()->replot(QCustomPlot::rpImmediateRefresh);
        ms.push_back(t.nsecsElapsed() / 1e6);
    }
    if (argc > 2) panel.exportTo(QString::fromLocal8Bit(argv[2]), 1200, 700);  // to look at it
    std::printf(
        "\n== Curve panel, 4 × 250 000 = 10⁶ points, full replot at 1200×700 (20 runs) ==\n");
    std::printf("%-28s %10.2f ms\n", "median", percentile(ms, 0.5));
    std::printf("%-28s %10.2f ms   (target < 30 ms: %s)\n", "worst",
                *std::max_element(ms.begin(), ms.end()),
                percentile(ms, 0.5) < 30 ? "met (median)" : "NOT met");
    return 0;
}
