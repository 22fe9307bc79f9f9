// AblationPanel: one bar per method with ± sd, a zero line and permutation p-value labels.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QFileInfo>
#include <QTemporaryDir>
#include <cmath>
#include <limits>

#include "ablation_panel.h"
#include "example_output.h"

using liftlab::AblationPanel;

namespace {

using liftlab::test::kNaN;

int countPlottables(QCustomPlot* plot, const char* className) {
    int n = 0;
    for (int i = 0; i < plot->plottableCount(); ++i)
        if (QString::fromLatin1(plot->plottable(i)->metaObject()->className()) ==
            QLatin1String(className))
            ++n;
    return n;
}

QStringList itemTexts(QCustomPlot* plot) {
    QStringList texts;
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(plot->item(i))) texts << t->text();
    return texts;
}

// σ²_Jac of the icnn-ablation preset: the full lifter clearly non-zero, the body-free and
// decoupled ablations ≈ 0 (one slightly negative), no-slack and direct softplus structural zeros.
void fillAblationExample(AblationPanel& panel) {
    panel.setTitle(QStringLiteral("σ²_Jac per architecture (200-shuffle permutation test)"));
    panel.setValueLabel(QStringLiteral("σ²_Jac"));
    panel.setNote(QStringLiteral("error bars ± sd of the permutation null  ·  * p < 0.05"));
    panel.setBar(QStringLiteral("lifter"), 3.2e-4, 6.1e-5, 1.0 / 201);
    panel.setStructuralZero(QStringLiteral("lifter-noslack"), QStringLiteral("0 — no slack"));
    panel.setBar(QStringLiteral("lifter-nobody"), -1.4e-5, 3.0e-5, 0.71);
    panel.setBar(QStringLiteral("lifter-decoupled"), 4.0e-6, 5.2e-5, 0.93);
    panel.setStructuralZero(QStringLiteral("softplus"), QStringLiteral("0 — no slack"));
}

}  // namespace

TEST(AblationPanel, PValueFormatting) {
    EXPECT_EQ(AblationPanel::formatP(1.0 / 201), QStringLiteral("p = 0.005"));
    EXPECT_EQ(AblationPanel::formatP(0.0004), QStringLiteral("p < 0.001"));
    EXPECT_EQ(AblationPanel::formatP(0.0), QStringLiteral("p < 0.001"));
    EXPECT_EQ(AblationPanel::formatP(1.0), QStringLiteral("p = 1"));
    EXPECT_EQ(AblationPanel::formatP(0.9996), QStringLiteral("p = 1"));
    EXPECT_EQ(AblationPanel::formatP(0.25), QStringLiteral("p = 0.25"));
    EXPECT_EQ(AblationPanel::formatP(0.0123), QStringLiteral("p = 0.012"));
    EXPECT_EQ(AblationPanel::formatP(0.05), QStringLiteral("p = 0.05"));
    // A significant p is never printed as 0.050.
    EXPECT_EQ(AblationPanel::formatP(0.0498), QStringLiteral("p = 0.0498"));
    EXPECT_TRUE(AblationPanel::formatP(kNaN).isEmpty());
    EXPECT_TRUE(AblationPanel::formatP(-0.1).isEmpty());
    EXPECT_TRUE(AblationPanel::formatP(1.5).isEmpty());
}

TEST(AblationPanel, CountsBarsReplacesAndClears) {
    AblationPanel panel;
    fillAblationExample(panel);
    EXPECT_EQ(panel.barCount(), 5);  // five categories, two of them structural zeros
    EXPECT_EQ(countPlottables(panel.plot(), "QCPBars"), 3);
    EXPECT_EQ(countPlottables(panel.plot(), "QCPErrorBars"), 3);
    EXPECT_EQ(panel.pLabel(QStringLiteral("lifter")), QStringLiteral("p = 0.005"));
    EXPECT_TRUE(panel.isSignificant(QStringLiteral("lifter")));
    EXPECT_FALSE(panel.isSignificant(QStringLiteral("lifter-nobody")));
    EXPECT_TRUE(panel.pLabel(QStringLiteral("softplus")).isEmpty());
    // The significant bar's label carries the star, the others do not.
    const QStringList texts = itemTexts(panel.plot());
    EXPECT_TRUE(texts.contains(QStringLiteral("p = 0.005 *")));
    EXPECT_TRUE(texts.contains(QStringLiteral("p = 0.71")));
    // Replacing keeps the count and the place.
    panel.setBar(QStringLiteral("lifter-nobody"), 1e-4, 1e-5, 0.0002);
    EXPECT_EQ(panel.barCount(), 5);
    EXPECT_EQ(panel.pLabel(QStringLiteral("lifter-nobody")), QStringLiteral("p < 0.001"));
    EXPECT_TRUE(panel.isSignificant(QStringLiteral("lifter-nobody")));
    auto* ticker = dynamic_cast<QCPAxisTickerText*>(panel.plot()->xAxis->ticker().data());
    ASSERT_NE(ticker, nullptr);
    EXPECT_EQ(ticker->ticks().value(3), QStringLiteral("lifter-nobody"));
    panel.clear();
    EXPECT_EQ(panel.barCount(), 0);
    EXPECT_TRUE(panel.pLabel(QStringLiteral("lifter")).isEmpty());
}

TEST(AblationPanel, RangeCoversZeroAndEveryBarWithItsError) {
    AblationPanel panel;
    panel.setBar(QStringLiteral("a"), 2e-4, 5e-5, 0.01);
    panel.setBar(QStringLiteral("b"), -3e-4, 1e-4, 0.3);
    QCPRange y = panel.plot()->yAxis->range();
    EXPECT_LT(y.lower, -4e-4);  // below the lower end of b's error bar, room for its label
    EXPECT_GT(y.upper, 2.5e-4);
    // Only positive bars: zero is still in range.
    AblationPanel pos;
    pos.setBar(QStringLiteral("a"), 5.0, 0.5, 0.5);
    pos.setBar(QStringLiteral("b"), 3.0, 1.0, kNaN);
    y = pos.plot()->yAxis->range();
    EXPECT_LE(y.lower, 0.0);
    EXPECT_GT(y.upper, 5.5);
    // Only negative bars.
    AblationPanel neg;
    neg.setBar(QStringLiteral("a"), -1e-4, 2e-5, 0.02);
    y = neg.plot()->yAxis->range();
    EXPECT_GE(y.upper, 0.0);
    EXPECT_LT(y.lower, -1.2e-4);
    // Exact zeros only: a usable range around zero.
    AblationPanel zero;
    zero.setBar(QStringLiteral("softplus"), 0.0, 0.0, 1.0);
    y = zero.plot()->yAxis->range();
    EXPECT_LT(y.lower, 0.0);
    EXPECT_GT(y.upper, 0.0);
    // The category axis shows every bar.
    const QCPRange x = panel.plot()->xAxis->range();
    EXPECT_LT(x.lower, 1.0 - 0.3);
    EXPECT_GT(x.upper, 2.0 + 0.3);
}

TEST(AblationPanel, BadInputIsTolerated) {
    AblationPanel panel;
    panel.setBar(QStringLiteral("a"), kNaN, 1.0, 0.5);  // ignored
    panel.setBar(QStringLiteral("b"), std::numeric_limits<double>::infinity(), 1.0, 0.5);
    EXPECT_EQ(panel.barCount(), 0);
    panel.setBar(QStringLiteral("c"), 1e-4, kNaN, kNaN);  // no error bar, no label
    panel.setBar(QStringLiteral("d"), 1e-4, -2.0, 0.5);   // negative sd: no error bar
    EXPECT_EQ(panel.barCount(), 2);
    EXPECT_EQ(countPlottables(panel.plot(), "QCPErrorBars"), 0);
    EXPECT_TRUE(panel.pLabel(QStringLiteral("c")).isEmpty());
    const QCPRange y = panel.plot()->yAxis->range();
    EXPECT_TRUE(std::isfinite(y.lower) && std::isfinite(y.upper));
    EXPECT_GT(y.upper, 1e-4);
    panel.plot()->replot();
}

TEST(AblationPanel, ExportsNonTrivialFiles) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    AblationPanel panel;
    EXPECT_TRUE(panel.exportTo(dir.filePath(QStringLiteral("empty.png")), 400, 300));
    fillAblationExample(panel);
    for (const char* ext : {"png", "svg", "pdf"}) {
        const QString path = dir.filePath(QStringLiteral("ablation.") + QLatin1String(ext));
        ASSERT_TRUE(panel.exportTo(path, 900, 560)) << ext;
        EXPECT_GT(QFileInfo(path).size(), 5000) << ext;
    }
    liftlab::test::saveExample(panel, QStringLiteral("ablation_panel.png"), 900, 560);
}

// A structural zero keeps its category but draws no bar, no error bar and no p label; its label
// sits on the zero line. A later setBar replaces it (and the reverse).
TEST(AblationPanel, StructuralZeroHasNoBarAndNoPValue) {
    AblationPanel panel;
    panel.setBar(QStringLiteral("lifter"), 3.2e-4, 6.1e-5, 1.0 / 201);
    panel.setStructuralZero(QStringLiteral("softplus"), QStringLiteral("0 — no slack"));
    EXPECT_EQ(panel.barCount(), 2);
    EXPECT_EQ(countPlottables(panel.plot(), "QCPBars"), 1);
    EXPECT_TRUE(panel.isStructuralZero(QStringLiteral("softplus")));
    EXPECT_FALSE(panel.isStructuralZero(QStringLiteral("lifter")));
    EXPECT_TRUE(panel.pLabel(QStringLiteral("softplus")).isEmpty());
    EXPECT_FALSE(panel.isSignificant(QStringLiteral("softplus")));
    const QStringList texts = itemTexts(panel.plot());
    EXPECT_TRUE(texts.contains(QStringLiteral("0 — no slack"))) << texts.join(", ").toStdString();
    EXPECT_EQ(texts.filter(QStringLiteral("p ")).size(), 1);  // the lifter's only
    panel.setBar(QStringLiteral("softplus"), 1e-5, 0, 0.5);
    EXPECT_FALSE(panel.isStructuralZero(QStringLiteral("softplus")));
    EXPECT_EQ(countPlottables(panel.plot(), "QCPBars"), 2);
}
