// TimingPanel: ms per step per method, split into the closed-form solve and the rest, ± sd.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QFileInfo>
#include <QTemporaryDir>
#include <cmath>

#include "timing_panel.h"

using liftlab::TimingPanel;

TEST(TimingPanel, SplitsEachBarIntoSolveAndRest) {
    TimingPanel panel;
    panel.setCost(QStringLiteral("adam"), 2.0, 0.1, NAN);      // no closed form
    panel.setCost(QStringLiteral("cf-prox"), 4.0, 0.2, 0.25);  // a quarter in the solve
    panel.setCost(QStringLiteral("cf-ridge"), 3.0, -1, 1.7);   // fraction clamped to 1
    ASSERT_EQ(panel.barCount(), 3);
    EXPECT_DOUBLE_EQ(panel.solveMs(QStringLiteral("adam")), 0.0);
    EXPECT_DOUBLE_EQ(panel.solveMs(QStringLiteral("cf-prox")), 1.0);
    EXPECT_DOUBLE_EQ(panel.solveMs(QStringLiteral("cf-ridge")), 3.0);
    EXPECT_TRUE(std::isnan(panel.solveMs(QStringLiteral("sgd"))));
    // The stacked parts add up to each bar; the axis covers the largest bar with its error.
    QCustomPlot* plot = panel.plot();
    auto* rest = qobject_cast<QCPBars*>(plot->plottable(0));
    auto* solve = qobject_cast<QCPBars*>(plot->plottable(1));
    ASSERT_TRUE(rest && solve);
    const double totals[] = {2.0, 4.0, 3.0};
    for (int i = 0; i < 3; ++i)
        EXPECT_DOUBLE_EQ(rest->data()->at(i)->value + solve->data()->at(i)->value, totals[i]);
    EXPECT_GE(plot->yAxis->range().upper, 4.2);
    EXPECT_DOUBLE_EQ(plot->yAxis->range().lower, 0.0);
}

TEST(TimingPanel, ReplacesIgnoresBadValuesClearsAndExports) {
    TimingPanel panel;
    panel.setCost(QStringLiteral("adam"), 2.0, 0.1, 0);
    panel.setCost(QStringLiteral("adam"), 5.0, 0.1, 0.5);  // replaced, not added
    panel.setCost(QStringLiteral("sgd"), -1.0, 0.1, 0);    // negative: ignored
    panel.setCost(QStringLiteral("sgd"), NAN, 0.1, 0);     // NaN: ignored
    ASSERT_EQ(panel.barCount(), 1);
    EXPECT_DOUBLE_EQ(panel.solveMs(QStringLiteral("adam")), 2.5);
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("timing.png"));
    ASSERT_TRUE(panel.exportTo(png, 640, 400));
    EXPECT_GT(QFileInfo(png).size(), 2000);
    panel.clear();
    EXPECT_EQ(panel.barCount(), 0);
}

// The legend names the closed-form solve only when some bar has one.
TEST(TimingPanel, LegendNamesTheSolveOnlyWhenAMethodHasOne) {
    TimingPanel panel;
    QCustomPlot* plot = panel.plot();
    auto* solve = plot->plottable(1);
    panel.setCost(QStringLiteral("lifter"), 5.0, 0.3, NAN);
    panel.setCost(QStringLiteral("softplus"), 2.4, 0.2, 0);
    EXPECT_FALSE(plot->legend->hasItemWithPlottable(solve));
    EXPECT_EQ(plot->legend->itemCount(), 1);
    panel.setCost(QStringLiteral("cf-prox"), 4.0, 0.2, 0.25);
    EXPECT_TRUE(plot->legend->hasItemWithPlottable(solve));
    EXPECT_EQ(plot->legend->itemCount(), 2);
    panel.clear();
    EXPECT_FALSE(plot->legend->hasItemWithPlottable(solve));
}
