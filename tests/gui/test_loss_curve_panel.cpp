// LossCurvePanel fed synthetic values: series bookkeeping, skipped values, file export.
#include <gtest/gtest.h>
#include <QFileInfo>
#include <QTemporaryDir>
#include <cmath>
#include <cstdio>
#include <limits>

#include "loss_curve_panel.h"
#include "method_colors.h"

using liftlab::LossCurvePanel;

namespace {

constexpr qint64 kMinExportBytes = 1024;  // a real figure, not an empty page

QVector<double> range(int n) {
    QVector<double> v;
    for (int i = 1; i <= n; ++i) v.push_back(i * 10.0);
    return v;
}

QVector<double> decaying(int n, double scale) {
    QVector<double> v;
    for (int i = 1; i <= n; ++i) v.push_back(scale * std::exp(-0.05 * i) + 0.01);
    return v;
}

}  // namespace

TEST(LossCurvePanel, CountsSeriesAndAppendsIncrementally) {
    LossCurvePanel panel;
    panel.setMetric("test_loss");
    EXPECT_EQ(panel.seriesCount(), 0);
    panel.appendPoints("sgd", range(5), decaying(5, 1.0));
    panel.appendPoints("cf-prox", range(5), decaying(5, 0.5));
    EXPECT_EQ(panel.seriesCount(), 2);
    EXPECT_EQ(panel.pointCount("sgd"), 5);

    // A second batch continues the curve.
    panel.appendPoints("sgd", {60, 70, 80}, {0.1, 0.09, 0.08});
    EXPECT_EQ(panel.pointCount("sgd"), 8);
    EXPECT_EQ(panel.pointCount("cf-prox"), 5);
    EXPECT_EQ(panel.pointCount("no-such-method"), 0);

    // A band is drawn but is not a series of its own.
    panel.setBand("sgd", range(5), decaying(5, 0.8), decaying(5, 1.2));
    EXPECT_EQ(panel.seriesCount(), 2);

    panel.clear();
    EXPECT_EQ(panel.seriesCount(), 0);
    EXPECT_EQ(panel.pointCount("sgd"), 0);
}

TEST(LossCurvePanel, SkipsNonFiniteAndNonPositiveOnLogScale) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    LossCurvePanel panel;
    panel.setLogY(true);
    panel.appendPoints("adam", {1, 2, 3, 4, 5, 6}, {0.5, nan, 0.0, -1.0, inf, 0.25});
    EXPECT_EQ(panel.pointCount("adam"), 2);  // 0.5 and 0.25 only

    // On a linear axis zero and negative values are fine; NaN and inf still are not.
    LossCurvePanel linear;
    linear.setLogY(false);
    linear.appendPoints("adam", {1, 2, 3, 4, 5, 6}, {0.5, nan, 0.0, -1.0, inf, 0.25});
    EXPECT_EQ(linear.pointCount("adam"), 4);

    // A method whose values are all unusable still has its legend entry.
    panel.appendPoints("sgd", {1, 2}, {nan, -3});
    EXPECT_EQ(panel.seriesCount(), 2);
    EXPECT_EQ(panel.pointCount("sgd"), 0);
}

TEST(LossCurvePanel, ExportsPngSvgAndPdf) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    // LIFTLAB_KEEP_FIGURES=1 keeps the files for a look (the path is printed).
    dir.setAutoRemove(qEnvironmentVariableIsEmpty("LIFTLAB_KEEP_FIGURES"));
    if (!dir.autoRemove()) std::printf("figures in %s\n", qPrintable(dir.path()));
    LossCurvePanel panel;
    panel.setTitle("synthetic");
    panel.setMetric("test_loss");
    panel.appendPoints("sgd", range(40), decaying(40, 1.0));
    panel.appendPoints("cf-prox", range(40), decaying(40, 0.3));
    panel.setBand("cf-prox", range(40), decaying(40, 0.25), decaying(40, 0.35));
    panel.setSeriesNote("sgd", "diverged at step 400");
    panel.rescale();
    for (const char* ext : {"png", "svg", "pdf"}) {
        const QString path = dir.filePath(QStringLiteral("curves.") + ext);
        EXPECT_TRUE(panel.exportTo(path, 900, 560)) << ext;
        EXPECT_GT(QFileInfo(path).size(), kMinExportBytes) << ext;
    }
    EXPECT_FALSE(panel.exportTo(dir.filePath("curves.bmpx"), 900, 560));
    EXPECT_FALSE(panel.exportTo(dir.filePath("curves.png"), 0, 560));
}

TEST(LossCurvePanel, ManySweepMembersGetTheirOwnPensAndASideLegend) {
    QTemporaryDir dir;
    dir.setAutoRemove(qEnvironmentVariableIsEmpty("LIFTLAB_KEEP_FIGURES"));
    if (!dir.autoRemove()) std::printf("figures in %s\n", qPrintable(dir.path()));
    LossCurvePanel panel;
    panel.setTitle("sweep");
    panel.setMetric("test_loss");
    int k = 0;
    for (const char* batch : {"4", "8", "32", "128"}) {
        for (const char* method : {"adam", "cf-ridge", "cf-prox"}) {
            const QString label = QString("%1@batch_size=%2").arg(method, batch);
            panel.appendPoints(label, range(30), decaying(30, 0.2 + 0.1 * k++));
        }
    }
    EXPECT_EQ(panel.seriesCount(), 12);
    EXPECT_TRUE(panel.exportTo(dir.filePath("sweep.png"), 900, 560));
    panel.clear();  // the legend goes back inside the plot
    panel.appendPoints("sgd", range(3), decaying(3, 1.0));
    EXPECT_TRUE(panel.exportTo(dir.filePath("after_clear.png"), 900, 560));
}

TEST(MethodColors, StableAndDistinctForKnownMethods) {
    using liftlab::methodColor;
    EXPECT_EQ(methodColor("sgd"), methodColor("sgd"));
    EXPECT_NE(methodColor("sgd"), methodColor("adam"));
    EXPECT_NE(methodColor("cf-ridge"), methodColor("cf-prox"));
    // A variant takes a shade of its family's colour (same hue, told apart from the family's own
    // curve); an unknown label still gets a valid, fixed colour.
    EXPECT_NE(methodColor("lifter-fanin"), methodColor("lifter"));
    EXPECT_EQ(methodColor("lifter-fanin"), methodColor("lifter-fanin"));
    EXPECT_NEAR(methodColor("lifter-fanin").hsvHue(), methodColor("lifter").hsvHue(), 2);
    EXPECT_NE(methodColor("cf-prox-2"), methodColor("cf-prox"));
    EXPECT_TRUE(methodColor("my-method").isValid());
    EXPECT_EQ(methodColor("my-method"), methodColor("my-method"));
}
