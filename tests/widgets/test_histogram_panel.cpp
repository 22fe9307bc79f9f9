// HistogramPanel and the shared histogram arithmetic (histogram_bins.h).
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QFileInfo>
#include <QTemporaryDir>
#include <cmath>
#include <limits>
#include <numeric>

#include "axis_rect_style.h"
#include "example_output.h"
#include "histogram_bins.h"
#include "histogram_panel.h"

using liftlab::HistogramPanel;

namespace {

using liftlab::test::kInf;
using liftlab::test::kNaN;

double sum(const QVector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0);
}

// Final test NLL of the 8-Gaussians CP-Flow over seeds (the "basin" experiment).
void fillHistogramExample(HistogramPanel& panel) {
    panel.setTitle(QStringLiteral("CP-Flow basins — 8 Gaussians, final test NLL over seeds"));
    panel.setValueLabel(QStringLiteral("test NLL (nats)"));
    panel.setSamples(QStringLiteral("lifter"),
                     {2.871, 2.884, 2.869, 2.902, 2.878, 2.893, 2.875, 2.881});
    panel.setSamples(QStringLiteral("pgd"), {2.915, 2.948, 3.012, 2.931, 2.987, 2.956});
    panel.setSamples(QStringLiteral("softplus"), {2.962, 3.105, 3.041, 2.995, 3.188});
}

}  // namespace

TEST(HistogramBins, FreedmanDiaconisMatchesTheFormula) {
    // 0..99: IQR = 74.25 − 24.75 = 49.5, h = 2·49.5·100^(−1/3) ≈ 21.33, range 99 → 5 bins.
    QVector<double> v(100);
    std::iota(v.begin(), v.end(), 0.0);
    EXPECT_EQ(liftlab::freedmanDiaconisBins(v, 1, 100), 5);
    // Clamping, and too few distinct values.
    EXPECT_EQ(liftlab::freedmanDiaconisBins(v, 8, 40), 8);
    EXPECT_EQ(liftlab::freedmanDiaconisBins({3.0, 3.0, 3.0}, 5, 40), 5);
    // A zero IQR with an outlier falls back to Sturges: ⌈log₂ 9⌉ + 1 = 5.
    EXPECT_EQ(liftlab::freedmanDiaconisBins({1, 1, 1, 1, 1, 1, 1, 1, 50}, 1, 40), 5);
}

TEST(HistogramBins, EdgesCountsAndOutline) {
    const QVector<double> e = liftlab::makeBinEdges(0.0, 10.0, 4);
    ASSERT_EQ(e.size(), 5);
    EXPECT_DOUBLE_EQ(e[1], 2.5);
    // Right-open bins, the last one closed; outside values and NaN ignored.
    const QVector<double> c =
        liftlab::histogramCounts({0.0, 2.4999, 2.5, 9.9, 10.0, -1.0, 11.0, kNaN}, e);
    EXPECT_EQ(c, (QVector<double>{2, 1, 0, 2}));
    // Log edges: equal ratios, exact outer edges.
    const QVector<double> l = liftlab::makeBinEdges(3.0, 3000.0, 6, true);
    EXPECT_DOUBLE_EQ(l.front(), 3.0);
    EXPECT_DOUBLE_EQ(l.back(), 3000.0);
    for (int i = 1; i < l.size(); ++i) EXPECT_NEAR(l[i] / l[i - 1], std::sqrt(10.0), 1e-9);
    // One value: widened so that the bins have width.
    const QVector<double> w = liftlab::makeBinEdges(2.0, 2.0, 5);
    EXPECT_LT(w.front(), 2.0);
    EXPECT_GT(w.back(), 2.0);
    // Outline: closed on zero, trimmed to the occupied bins.
    QVector<double> k, h;
    liftlab::stepOutline({0, 1, 2, 3}, {0, 4, 2}, &k, &h, /*trim=*/true);
    EXPECT_EQ(k, (QVector<double>{1, 1, 2, 3, 3}));
    EXPECT_EQ(h, (QVector<double>{0, 4, 2, 2, 0}));
    liftlab::stepOutline({0, 1, 2, 3}, {0, 0, 0}, &k, &h, /*trim=*/true);
    EXPECT_TRUE(k.isEmpty());
}

TEST(AxisRectStyle, LegendColumnsFollowTheWidth) {
    QCustomPlot plot;
    for (int i = 0; i < 5; ++i) {
        QCPGraph* g = plot.addGraph();
        g->setName(QStringLiteral("a rather long legend entry number %1").arg(i));
    }
    QCPLegend* legend = plot.legend;
    const int entry = legend->item(0)->minimumOuterSizeHint().width();
    ASSERT_GT(entry, 50);
    liftlab::fitLegendColumns(legend, 10 * entry, 3);
    EXPECT_EQ(legend->wrap(), 3);
    EXPECT_EQ(legend->columnCount(), 3);
    EXPECT_EQ(legend->rowCount(), 2);
    liftlab::fitLegendColumns(legend, 2 * entry + legend->columnSpacing() + 60, 3);
    EXPECT_EQ(legend->wrap(), 2);
    EXPECT_EQ(legend->rowCount(), 3);
    liftlab::fitLegendColumns(legend, entry / 2, 3);
    EXPECT_EQ(legend->columnCount(), 1);
    EXPECT_EQ(legend->rowCount(), 5);  // rearranged, nothing lost
    for (int i = 0; i < 5; ++i) EXPECT_NE(legend->item(i), nullptr);
}

TEST(HistogramPanel, SharedBinsCoverEverySampleAndCountsSumToN) {
    HistogramPanel panel;
    fillHistogramExample(panel);
    EXPECT_EQ(panel.seriesCount(), 3);
    const QVector<double> edges = panel.binEdges();
    ASSERT_GE(edges.size(), 6);   // at least 5 bins
    EXPECT_LE(edges.size(), 41);  // at most 40
    EXPECT_LE(edges.front(), 2.869);
    EXPECT_GE(edges.back(), 3.188);
    EXPECT_DOUBLE_EQ(sum(panel.counts(QStringLiteral("lifter"))), 8.0);
    EXPECT_DOUBLE_EQ(sum(panel.counts(QStringLiteral("pgd"))), 6.0);
    EXPECT_DOUBLE_EQ(sum(panel.counts(QStringLiteral("softplus"))), 5.0);
    // The axes show every bin and the tallest bar.
    const QCPRange x = panel.histogramRect()->axis(QCPAxis::atBottom)->range();
    EXPECT_LE(x.lower, edges.front());
    EXPECT_GE(x.upper, edges.back());
    double top = 0;
    for (const QString& m : {QStringLiteral("lifter"), QStringLiteral("pgd")})
        for (double c : panel.counts(m)) top = std::max(top, c);
    EXPECT_GE(panel.histogramRect()->axis(QCPAxis::atLeft)->range().upper, top);
    // The strip shares the x range and has one lane per method.
    EXPECT_EQ(panel.stripRect()->axis(QCPAxis::atBottom)->range(), x);
    EXPECT_GE(panel.stripRect()->axis(QCPAxis::atLeft)->range().upper, 3.0);
    // A fixed bin count, then replacing a method's samples.
    panel.setBinCount(7);
    EXPECT_EQ(panel.binEdges().size(), 8);
    panel.setSamples(QStringLiteral("pgd"), {2.9, 3.0});
    EXPECT_EQ(panel.seriesCount(), 3);
    EXPECT_DOUBLE_EQ(sum(panel.counts(QStringLiteral("pgd"))), 2.0);
    panel.clear();
    EXPECT_EQ(panel.seriesCount(), 0);
    EXPECT_TRUE(panel.binEdges().isEmpty());
}

TEST(HistogramPanel, LogScaleUsesLogBinsAndDropsNonPositive) {
    HistogramPanel panel;
    panel.setLogScale(true);
    panel.setSamples(QStringLiteral("lifter"), {22.85, 23.1, 22.7});
    panel.setSamples(QStringLiteral("softplus"), {443.9, 390.2, 0.0, -5.0});
    EXPECT_EQ(panel.sampleCount(QStringLiteral("softplus")), 2);
    const QVector<double> e = panel.binEdges();
    ASSERT_GE(e.size(), 3);
    EXPECT_LE(e.front(), 22.7);
    EXPECT_GE(e.back(), 443.9);
    EXPECT_NEAR(e[2] / e[1], e[1] / e[0], 1e-9);
    EXPECT_DOUBLE_EQ(sum(panel.counts(QStringLiteral("softplus"))), 2.0);
    EXPECT_EQ(panel.histogramRect()->axis(QCPAxis::atBottom)->scaleType(), QCPAxis::stLogarithmic);
    // Back to linear: the non-positive sample counts again.
    panel.setLogScale(false);
    EXPECT_EQ(panel.sampleCount(QStringLiteral("softplus")), 4);
    EXPECT_LE(panel.binEdges().front(), -5.0);
}

TEST(HistogramPanel, NonFiniteSamplesAreSkipped) {
    HistogramPanel panel;
    panel.setSamples(QStringLiteral("lifter"), {kNaN, 1.0, kInf, 2.0, -kInf, 3.0});
    EXPECT_EQ(panel.sampleCount(QStringLiteral("lifter")), 3);
    EXPECT_DOUBLE_EQ(sum(panel.counts(QStringLiteral("lifter"))), 3.0);
    const QCPRange x = panel.histogramRect()->axis(QCPAxis::atBottom)->range();
    EXPECT_TRUE(std::isfinite(x.lower) && std::isfinite(x.upper));
    // Only bad values, or one repeated value: no crash, sensible bins.
    HistogramPanel bad;
    bad.setSamples(QStringLiteral("pgd"), {kNaN, kInf});
    EXPECT_EQ(bad.seriesCount(), 1);
    EXPECT_TRUE(bad.binEdges().isEmpty());
    bad.setSamples(QStringLiteral("softplus"), {4.0, 4.0, 4.0});
    ASSERT_GE(bad.binEdges().size(), 2);
    EXPECT_LT(bad.binEdges().front(), 4.0);
    EXPECT_DOUBLE_EQ(sum(bad.counts(QStringLiteral("softplus"))), 3.0);
    bad.plot()->replot();
}

TEST(HistogramPanel, ExportsNonTrivialFiles) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    HistogramPanel panel;
    EXPECT_TRUE(panel.exportTo(dir.filePath(QStringLiteral("empty.png")), 400, 300));
    fillHistogramExample(panel);
    for (const char* ext : {"png", "svg", "pdf"}) {
        const QString path = dir.filePath(QStringLiteral("histogram.") + QLatin1String(ext));
        ASSERT_TRUE(panel.exportTo(path, 900, 560)) << ext;
        EXPECT_GT(QFileInfo(path).size(), 5000) << ext;
    }
    liftlab::test::saveExample(panel, QStringLiteral("histogram_panel.png"), 900, 560);
    HistogramPanel logPanel;
    logPanel.setTitle(QStringLiteral("HEPMASS 21-D — final test NLL over seeds"));
    logPanel.setValueLabel(QStringLiteral("test NLL (nats)"));
    logPanel.setLogScale(true);
    logPanel.setSamples(QStringLiteral("lifter"), {22.85, 23.4, 22.61});
    logPanel.setSamples(QStringLiteral("pgd"), {27.01, 26.2, 28.9});
    logPanel.setSamples(QStringLiteral("softplus"), {443.88, 402.5, 517.3});
    liftlab::test::saveExample(logPanel, QStringLiteral("histogram_panel_log.png"), 900, 560);
}
