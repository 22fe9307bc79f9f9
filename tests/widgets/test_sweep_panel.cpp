// SweepPanel: a sweep's final metric against the swept value, one line per method with ± sd
// error bars; log axes drop non-positive values and keep bars above zero.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QFileInfo>
#include <QTemporaryDir>
#include <cmath>
#include <limits>

#include "example_output.h"
#include "sweep_panel.h"

using liftlab::SweepPanel;

namespace {
using liftlab::test::kNaN;
}

TEST(SweepPanel, OneLinePerMethodSortedByTheSweptValueWithErrorBars) {
    SweepPanel panel;
    panel.setAxes("batch size", "final test loss", /*logX=*/true, /*logY=*/true);
    // Given out of order: the line is drawn in order of x, the bars follow their points.
    panel.addLine("cf-ridge", {32, 4, 8, 128}, {0.156, 0.541, 0.566, 0.137},
                  {0.0026, 0.0985, 0.0928, 0.0067});
    panel.addLine("cf-prox", {4, 8, 32, 128}, {0.115, 0.086, 0.046, 0.0335}, {0, 0, 0, 0});
    EXPECT_EQ(panel.seriesCount(), 2);
    EXPECT_EQ(panel.pointCount("cf-ridge"), 4);
    auto* g = panel.plot()->graph(0);
    ASSERT_EQ(g->dataCount(), 4);
    EXPECT_DOUBLE_EQ(g->data()->at(0)->key, 4);
    EXPECT_DOUBLE_EQ(g->data()->at(0)->value, 0.541);
    EXPECT_DOUBLE_EQ(panel.errorAt("cf-ridge", 0), 0.0985);
    EXPECT_DOUBLE_EQ(panel.errorAt("cf-ridge", 2), 0.0026);  // x = 32
    EXPECT_DOUBLE_EQ(panel.errorAt("cf-prox", 1), 0.0);
    EXPECT_EQ(panel.errorAt("adam", 0), -1);
    // The legend lists the methods, not the error bars.
    EXPECT_EQ(panel.plot()->legend->itemCount(), 2);
}

TEST(SweepPanel, LogAxesSkipNonPositiveAndNonFinitePoints) {
    SweepPanel panel;
    panel.setAxes("λ", "final test loss", /*logX=*/true, /*logY=*/true);
    panel.addLine("cf-prox", {0, 0.1, 1, 10, 100}, {0.1, kNaN, -1, 0.05, 0.04}, {0, 0, 0, 2, 0});
    EXPECT_EQ(panel.pointCount("cf-prox"), 2);  // x = 0, mean NaN, mean −1 are left out
    // sd 2 around 0.05 on a log axis: the lower bar stops above zero.
    auto* bars = qobject_cast<QCPErrorBars*>(panel.plot()->plottable(1));
    ASSERT_NE(bars, nullptr);
    EXPECT_LT(bars->data()->at(0).errorMinus, 0.05);
    EXPECT_DOUBLE_EQ(bars->data()->at(0).errorPlus, 2.0);
}

// A known value of the problem (the Bayes ceiling of a class-count sweep): a dashed line in x
// order, in the legend, without error bars; its x values get ticks like the methods'.
TEST(SweepPanel, ReferenceLineIsDashedSortedAndHasNoBars) {
    SweepPanel panel;
    panel.setAxes("task.output_dim", "final test accuracy", /*logX=*/true, /*logY=*/false);
    panel.addLine("ce", {10, 100, 1000}, {0.995, 0.962, 0.769}, {0.001, 0.002, 0.01});
    panel.addReferenceLine("Bayes rule (ceiling)", {1000, 10, kNaN}, {0.935, 0.999, 0.5});
    EXPECT_EQ(panel.seriesCount(), 2);
    EXPECT_EQ(panel.pointCount("Bayes rule (ceiling)"), 2);  // the NaN x is left out
    auto* g = panel.plot()->graph(1);
    EXPECT_EQ(g->pen().style(), Qt::DashLine);
    EXPECT_DOUBLE_EQ(g->data()->at(0)->key, 10);
    EXPECT_DOUBLE_EQ(g->data()->at(1)->value, 0.935);
    EXPECT_EQ(panel.errorAt("Bayes rule (ceiling)", 0), -1);
    EXPECT_EQ(panel.plot()->legend->itemCount(), 2);
    // Accuracies near 1 on the left and top right: the legend goes to the empty bottom left.
    panel.rescale();
    EXPECT_EQ(panel.legendCorner(), Qt::AlignBottom | Qt::AlignLeft);
}

// Falling losses (high on the left, low on the right) leave the top right free: the legend stays
// there.
TEST(SweepPanel, LegendStaysTopRightWhenThatCornerIsFree) {
    SweepPanel panel;
    panel.setAxes("batch size", "final test loss", /*logX=*/true, /*logY=*/true);
    panel.addLine("cf-prox", {4, 8, 32, 128}, {0.115, 0.086, 0.046, 0.0335}, {0, 0, 0, 0});
    panel.rescale();
    EXPECT_EQ(panel.legendCorner(), Qt::AlignTop | Qt::AlignRight);
}

TEST(SweepPanel, CaptionTitleClearAndExport) {
    QTemporaryDir dir;
    SweepPanel panel;
    panel.setTitle("cf-lambda-sweep");
    panel.setAxes("λ of cf-prox (on batch sums)", "final test loss", true, true);
    panel.addLine("adam", {0.1, 1, 10}, {0.05, 0.05, 0.05}, {0.003, 0.003, 0.003});
    panel.setCaption("λ multiplies the penalty against the batch SUM\nsecond line");
    EXPECT_TRUE(panel.caption().contains("batch SUM"));
    panel.rescale();
    const QString png = dir.filePath("sweep.png");
    ASSERT_TRUE(panel.exportTo(png, 800, 560));
    EXPECT_GT(QFileInfo(png).size(), 5000);
    panel.setCaption(QString());
    EXPECT_TRUE(panel.caption().isEmpty());
    panel.clear();
    EXPECT_EQ(panel.seriesCount(), 0);
    EXPECT_EQ(panel.plot()->plottableCount(), 0);
}
