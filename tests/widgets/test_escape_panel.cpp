// EscapePanel: traces over the shoulder band, occupancy, dwell histograms and their readout.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QFileInfo>
#include <QTemporaryDir>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "escape_panel.h"
#include "example_output.h"
#include "method_colors.h"

using liftlab::EscapePanel;

namespace {

using liftlab::test::kInf;
using liftlab::test::kNaN;
const double kShoulder = std::log(0.05 / 0.95);

// A mean-reverting walk of θ̃ around `centre` (lifter: cycles through the shoulder) or a drift
// down into it (direct softplus: absorbed).
QVector<double> walk(std::mt19937& rng, int n, double start, double centre, double pull,
                     double noise) {
    std::normal_distribution<double> z(0.0, 1.0);
    QVector<double> v(n);
    double x = start;
    for (int i = 0; i < n; ++i) {
        v[i] = x;
        x += pull * (centre - x) + noise * z(rng);
    }
    return v;
}

QVector<double> escapeRange(int n, double step) {
    QVector<double> v(n);
    for (int i = 0; i < n; ++i) v[i] = i * step;
    return v;
}

// The figure the lab draws after an icnn-escape run: lifter coordinates cycle, softplus ones
// get absorbed; lifter exits often with short dwells, softplus rarely.
void fillEscapeExample(EscapePanel& panel) {
    std::mt19937 rng(7);
    const int n = 600;
    const QVector<double> steps = escapeRange(n, 5);
    panel.setTitle(QStringLiteral("Escape from the readout shoulder — Gumbel 1-D, Wz₂"));
    for (int c : {3, 17, 42})
        panel.addTrace(QStringLiteral("lifter"), c, steps, walk(rng, n, -2.0, -3.0, 0.02, 0.35));
    for (int c : {5, 29, 61})
        panel.addTrace(QStringLiteral("softplus"), c, steps,
                       walk(rng, n, -2.0 + 0.3 * c / 61, -6.5, 0.008, 0.05));
    QVector<double> occLifter(n), occSoft(n);
    for (int i = 0; i < n; ++i) {
        occLifter[i] = 0.32 + 0.08 * std::sin(i / 23.0) + 0.03 * std::sin(i / 3.1);
        occSoft[i] = 0.9 * (1 - std::exp(-i / 120.0));
    }
    panel.setOccupancy(QStringLiteral("lifter"), steps, occLifter);
    panel.setOccupancy(QStringLiteral("softplus"), steps, occSoft);
    std::lognormal_distribution<double> lifterDwell(std::log(60.0), 0.9);
    std::lognormal_distribution<double> softDwell(std::log(8.0), 0.6);
    QVector<double> dl, ds;
    for (int i = 0; i < 412; ++i) dl << std::max(1.0, std::round(lifterDwell(rng)));
    for (int i = 0; i < 9; ++i) ds << std::max(1.0, std::round(softDwell(rng)));
    panel.setDwellTimes(QStringLiteral("lifter"), dl);
    panel.setDwellTimes(QStringLiteral("softplus"), ds);
    panel.setEscapeStats(QStringLiteral("lifter"), 2.14e-3, 412, 61);
    panel.setEscapeStats(QStringLiteral("softplus"), 4.7e-5, 9, 8);
}

}  // namespace

TEST(EscapePanel, CountsTracesOccupancyAndDwellSeries) {
    EscapePanel panel;
    EXPECT_EQ(panel.traceCount(), 0);
    fillEscapeExample(panel);
    EXPECT_EQ(panel.traceCount(), 6);
    EXPECT_EQ(panel.occupancyCount(), 2);
    EXPECT_EQ(panel.dwellSeriesCount(), 2);
    // One legend entry per method for the traces, not one per coordinate.
    EXPECT_EQ(panel.plot()->legend->itemCount(), 2);
    // A second trace of the same coordinate replaces the first.
    panel.addTrace(QStringLiteral("lifter"), 3, {0, 1, 2}, {-1, -2, -3});
    EXPECT_EQ(panel.traceCount(), 6);
    panel.clear();
    EXPECT_EQ(panel.traceCount(), 0);
    EXPECT_EQ(panel.occupancyCount(), 0);
    EXPECT_EQ(panel.dwellSeriesCount(), 0);
    EXPECT_TRUE(panel.statsText(QStringLiteral("lifter")).isEmpty());
    EXPECT_TRUE(panel.dwellBinEdges().isEmpty());
}

TEST(EscapePanel, CoordinatesOfOneMethodShareItsHueAtDifferentLightness) {
    EscapePanel panel;
    for (const QString& method : {QStringLiteral("lifter"), QStringLiteral("pgd")})
        for (int c : {9, 2, 5}) panel.addTrace(method, c, {0, 1}, {-1, -2});
    ASSERT_EQ(panel.plot()->graphCount(), 6);
    QVector<double> lifterLightness, pgdLightness;
    for (int i = 0; i < 6; ++i) {
        const QColor c = panel.plot()->graph(i)->pen().color();
        ASSERT_TRUE(c.isValid());
        if (i < 3) {
            EXPECT_NEAR(c.hslHueF(), liftlab::methodColor(QStringLiteral("lifter")).hslHueF(),
                        0.01);
            lifterLightness << c.lightnessF();
        } else {
            EXPECT_EQ(c.hslSaturationF(), 0.0);  // pgd's grey stays grey
            pgdLightness << c.lightnessF();
        }
    }
    for (const QVector<double>& l : {lifterLightness, pgdLightness}) {
        EXPECT_GT(std::abs(l[0] - l[1]), 0.05);
        EXPECT_GT(std::abs(l[1] - l[2]), 0.05);
        EXPECT_GT(std::abs(l[0] - l[2]), 0.05);
    }
}

TEST(EscapePanel, TraceAxesCoverDataAndTheShoulderBand) {
    EscapePanel panel;
    EXPECT_NEAR(panel.shoulderThreshold(), -2.944439, 1e-6);
    // Every value above the shoulder: the axis still reaches below the threshold.
    panel.addTrace(QStringLiteral("lifter"), 0, {0, 100, 200, 300}, {1.0, 2.5, -0.5, 0.2});
    const QCPRange x = panel.traceRect()->axis(QCPAxis::atBottom)->range();
    const QCPRange y = panel.traceRect()->axis(QCPAxis::atLeft)->range();
    EXPECT_LE(x.lower, 0.0);
    EXPECT_GE(x.upper, 300.0);
    EXPECT_GE(y.upper, 2.5);
    EXPECT_LT(y.lower, panel.shoulderThreshold());
    // A trace absorbed deep in the shoulder is covered too.
    panel.addTrace(QStringLiteral("softplus"), 1, {0, 300}, {-2.0, -9.0});
    EXPECT_LE(panel.traceRect()->axis(QCPAxis::atLeft)->range().lower, -9.0);
    // The pgd convention: the band ends at θ = 0.
    panel.setShoulderThreshold(0.0);
    EXPECT_DOUBLE_EQ(panel.shoulderThreshold(), 0.0);
    EXPECT_LT(panel.traceRect()->axis(QCPAxis::atLeft)->range().lower, -9.0);
}

TEST(EscapePanel, OccupancyAxisIsAFractionCoveringTheData) {
    EscapePanel panel;
    panel.setOccupancy(QStringLiteral("lifter"), {0, 10, 20, 30}, {0.1, 0.2, 0.15, 0.05});
    QCPRange y = panel.occupancyRect()->axis(QCPAxis::atLeft)->range();
    EXPECT_LE(y.lower, 0.0);
    EXPECT_GE(y.upper, 0.2);
    EXPECT_LT(y.upper, 0.5);  // a small fraction is not squashed against a 0..1 axis
    panel.setOccupancy(QStringLiteral("softplus"), {0, 10, 20, 30}, {0.5, 0.9, 1.0, 1.0});
    y = panel.occupancyRect()->axis(QCPAxis::atLeft)->range();
    EXPECT_GE(y.upper, 1.0);
    EXPECT_GE(panel.occupancyRect()->axis(QCPAxis::atBottom)->range().upper, 30.0);
}

TEST(EscapePanel, DwellBinsAreLogSpacedSharedAndCountEveryDwell) {
    EscapePanel panel;
    panel.setDwellNormalised(false);
    const QVector<double> lifter = {3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610};
    const QVector<double> softplus = {2, 2, 4, 7};
    panel.setDwellTimes(QStringLiteral("lifter"), lifter);
    panel.setDwellTimes(QStringLiteral("softplus"), softplus);
    const QVector<double> edges = panel.dwellBinEdges();
    ASSERT_GE(edges.size(), 3);
    EXPECT_LE(edges.front(), 2.0);
    EXPECT_GE(edges.back(), 610.0);
    // Equal ratios between consecutive edges (log spacing), to rounding.
    const double ratio = edges[1] / edges[0];
    EXPECT_GT(ratio, 1.0);
    for (int i = 1; i + 1 < edges.size(); ++i) EXPECT_NEAR(edges[i + 1] / edges[i], ratio, 1e-9);
    auto sum = [](const QVector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
    EXPECT_DOUBLE_EQ(sum(panel.dwellHeights(QStringLiteral("lifter"))), lifter.size());
    EXPECT_DOUBLE_EQ(sum(panel.dwellHeights(QStringLiteral("softplus"))), softplus.size());
    EXPECT_EQ(panel.dwellHeights(QStringLiteral("softplus")).size(), edges.size() - 1);
    // As shares, each method sums to one.
    panel.setDwellNormalised(true);
    EXPECT_NEAR(sum(panel.dwellHeights(QStringLiteral("lifter"))), 1.0, 1e-12);
    const QCPRange x = panel.dwellRect()->axis(QCPAxis::atBottom)->range();
    EXPECT_LE(x.lower, 2.0);
    EXPECT_GE(x.upper, 610.0);
    EXPECT_EQ(panel.dwellRect()->axis(QCPAxis::atBottom)->scaleType(), QCPAxis::stLogarithmic);
}

TEST(EscapePanel, IntegerDwellsDoNotLeaveEmptyTeeth) {
    EscapePanel panel;
    panel.setDwellNormalised(false);
    QVector<double> dwells;
    for (int d = 1; d <= 9; ++d) dwells << d;
    panel.setDwellTimes(QStringLiteral("lifter"), dwells);
    const QVector<double> h = panel.dwellHeights(QStringLiteral("lifter"));
    for (int i = 0; i < h.size(); ++i) EXPECT_GT(h[i], 0.0) << "bin " << i;
}

// The exit rate carries its unit (exits per coordinate-step in the shoulder), the dwell its steps.
TEST(EscapePanel, StatsTextFormatsRateExitsAndMedian) {
    EscapePanel panel;
    panel.setEscapeStats(QStringLiteral("lifter"), 2.14e-3, 412, 61);
    EXPECT_EQ(
        panel.statsText(QStringLiteral("lifter")),
        QStringLiteral("exit rate 2.14×10⁻³ /coord·step · 412 exits · median dwell 61 steps"));
    panel.setEscapeStats(QStringLiteral("softplus"), 0.0, 0, std::nan(""));
    EXPECT_EQ(panel.statsText(QStringLiteral("softplus")),
              QStringLiteral("exit rate 0 /coord·step · 0 exits · no completed dwell"));
    panel.setEscapeStats(QStringLiteral("pgd"), 0.05, 1, 12.5);
    EXPECT_EQ(panel.statsText(QStringLiteral("pgd")),
              QStringLiteral("exit rate 0.05 /coord·step · 1 exit · median dwell 12.5 steps"));
    panel.setEscapeStats(QStringLiteral("x"), 9.9999e-5, 3, 2);
    EXPECT_TRUE(
        panel.statsText(QStringLiteral("x")).startsWith(QStringLiteral("exit rate 1×10⁻⁴")));
    EXPECT_TRUE(panel.statsText(QStringLiteral("unknown")).isEmpty());
    // Stats without dwells still get a key entry (a method that never escaped).
    EXPECT_EQ(panel.dwellSeriesCount(), 0);
}

TEST(EscapePanel, NonFiniteInputIsSkipped) {
    EscapePanel panel;
    panel.addTrace(QStringLiteral("lifter"), 0, {0, 1, 2, kNaN, 4}, {-1, kNaN, kInf, -2, -3});
    ASSERT_EQ(panel.traceCount(), 1);
    EXPECT_EQ(panel.plot()->graph(0)->dataCount(), 2);
    const QCPRange y = panel.traceRect()->axis(QCPAxis::atLeft)->range();
    EXPECT_TRUE(std::isfinite(y.lower) && std::isfinite(y.upper));
    panel.setOccupancy(QStringLiteral("lifter"), {0, 1, 2}, {kNaN, 0.5, -kInf});
    panel.setDwellTimes(QStringLiteral("lifter"), {kNaN, 0, -3, kInf, 5, 7});
    double total = 0;
    for (double h : panel.dwellHeights(QStringLiteral("lifter"))) total += h;
    EXPECT_NEAR(total, 1.0, 1e-12);    // only 5 and 7 counted, as shares
    panel.setShoulderThreshold(kNaN);  // ignored
    EXPECT_NEAR(panel.shoulderThreshold(), std::log(0.05 / 0.95), 1e-12);
    // All-bad dwells: an empty histogram, not a crash.
    EscapePanel empty;
    empty.setDwellTimes(QStringLiteral("lifter"), {kNaN, -1});
    EXPECT_TRUE(empty.dwellBinEdges().isEmpty());
    empty.plot()->replot();
}

TEST(EscapePanel, ExportsNonTrivialFiles) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    EscapePanel panel;
    // An empty panel exports (notes in each panel) ...
    EXPECT_TRUE(panel.exportTo(dir.filePath(QStringLiteral("empty.png")), 600, 400));
    liftlab::test::saveExample(panel, QStringLiteral("escape_panel_empty.png"), 600, 400);
    fillEscapeExample(panel);
    for (const char* ext : {"png", "svg", "pdf"}) {
        const QString path = dir.filePath(QStringLiteral("escape.") + QLatin1String(ext));
        ASSERT_TRUE(panel.exportTo(path, 1200, 800)) << ext;
        EXPECT_GT(QFileInfo(path).size(), 5000) << ext;
    }
    EXPECT_FALSE(panel.exportTo(dir.filePath(QStringLiteral("bad.png")), 0, 800));
    liftlab::test::saveExample(panel, QStringLiteral("escape_panel.png"), 1200, 800);
    // Five methods at a small size: the keys wrap, nothing overlaps.
    std::mt19937 rng(3);
    const QVector<double> steps = escapeRange(300, 10);
    for (const char* m : {"lifter-noslack", "lifter-nobody", "pgd"}) {
        const QString method = QLatin1String(m);
        panel.addTrace(method, 1, steps, walk(rng, 300, -2.5, -3.5, 0.03, 0.2));
        QVector<double> occ(300, 0.5);
        panel.setOccupancy(method, steps, occ);
        panel.setEscapeStats(method, 1e-4, 20, std::nan(""));
    }
    liftlab::test::saveExample(panel, QStringLiteral("escape_panel_small.png"), 800, 560);
}

// Four methods of eight coordinates overlap into 32 traces: one method's are shown at a time
// (the legend follows), all again on request; an empty panel says why.
TEST(EscapePanel, ShowsOneMethodsTracesAtATime) {
    EscapePanel panel;
    for (const char* m : {"lifter", "softplus"})
        for (int c = 0; c < 8; ++c) panel.addTrace(QString::fromLatin1(m), c, {0, 1}, {-1, -2});
    EXPECT_EQ(panel.traceMethods(), (QStringList{"lifter", "softplus"}));
    EXPECT_EQ(panel.visibleTraceCount(), 16);
    panel.showTracesOf(QStringLiteral("softplus"));
    EXPECT_EQ(panel.visibleTraceCount(), 8);
    EXPECT_EQ(panel.plot()->legend->itemCount(), 1);
    panel.addTrace(QStringLiteral("lifter"), 9, {0, 1}, {0, 1});  // hidden as it comes
    EXPECT_EQ(panel.visibleTraceCount(), 8);
    panel.showTracesOf(QString());
    EXPECT_EQ(panel.visibleTraceCount(), 17);
    EscapePanel empty;
    empty.setEmptyReason(QStringLiteral("escape dynamics are recorded for ICNN runs"));
    EXPECT_EQ(empty.emptyReason(), QStringLiteral("escape dynamics are recorded for ICNN runs"));
    EXPECT_TRUE(empty.isEmpty());
}
