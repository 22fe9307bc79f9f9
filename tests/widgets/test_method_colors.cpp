// Method colours across panels: the CIEDE2000 difference the palette test relies on (checked
// against the published test pairs), run tags of a comparison keeping their method's colour, and
// the curve panel's line style per run.
#include <gtest/gtest.h>
#include <QPen>

#include "loss_curve_panel.h"
#include "method_colors.h"

using liftlab::ciede2000;
using liftlab::methodColor;

// Sharma, Wu & Dalal (2005), Table 1: pairs 1, 7, 13, 17, 25 and 34 with their ΔE₀₀ (4 decimals).
TEST(MethodColors, Ciede2000MatchesThePublishedTestPairs) {
    struct Pair {
        std::array<double, 3> a, b;
        double expected;
    };
    const Pair pairs[] = {
        {{50.0, 2.6772, -79.7751}, {50.0, 0.0, -82.7485}, 2.0425},
        {{50.0, 0.0, 0.0}, {50.0, -1.0, 2.0}, 2.3669},
        {{50.0, 2.4900, -0.0010}, {50.0, -2.4900, 0.0011}, 7.2195},
        {{50.0, 2.5, 0.0}, {73.0, 25.0, -18.0}, 27.1492},
        {{60.2574, -34.0099, 36.2677}, {60.4626, -34.1751, 39.4387}, 1.2644},
        {{2.0776, 0.0795, -1.1350}, {0.9033, -0.0636, -0.5514}, 0.9082},
    };
    for (const auto& p : pairs) {
        EXPECT_NEAR(ciede2000(p.a, p.b), p.expected, 5e-5);
        EXPECT_NEAR(ciede2000(p.b, p.a), p.expected, 5e-5);  // symmetric
    }
    EXPECT_EQ(liftlab::colourDifference(QColor(10, 20, 30), QColor(10, 20, 30)), 0.0);
    // Black and white: L* 0 and 100, ΔE₀₀ = 100 (SL = 1 at L̄ = 50).
    EXPECT_NEAR(liftlab::colourDifference(Qt::black, Qt::white), 100.0, 0.05);
}

TEST(MethodColors, ARunTagKeepsTheMethodsColour) {
    int index = -7;
    EXPECT_EQ(liftlab::withoutRunTag(QStringLiteral("cf-prox (B)"), &index), "cf-prox");
    EXPECT_EQ(index, 1);
    EXPECT_EQ(liftlab::withoutRunTag(QStringLiteral("cf-prox"), &index), "cf-prox");
    EXPECT_EQ(index, -1);
    EXPECT_EQ(liftlab::withoutRunTag(QStringLiteral("x (b)"), &index), "x (b)");  // not a tag
    EXPECT_EQ(liftlab::runTag(2), QStringLiteral(" (C)"));
    EXPECT_EQ(methodColor("my-method (A)"), methodColor("my-method"));
    EXPECT_EQ(methodColor("my-method@batch_size=8 (C)"), methodColor("my-method@batch_size=8"));
}

TEST(MethodColors, CurvesOfComparedRunsDifferByLineStyleNotColour) {
    liftlab::LossCurvePanel panel;
    for (const char* label : {"alpha (A)", "alpha (B)", "alpha (C)", "beta (B)"})
        panel.appendPoints(label, {1, 2}, {1, 0.5});
    EXPECT_EQ(panel.seriesPenOf("alpha (A)").color(), panel.seriesPenOf("alpha (B)").color());
    EXPECT_EQ(panel.seriesPenOf("alpha (A)").color(), methodColor("alpha"));
    EXPECT_EQ(panel.seriesPenOf("alpha (A)").style(), Qt::SolidLine);
    EXPECT_EQ(panel.seriesPenOf("alpha (B)").style(), Qt::DashLine);
    EXPECT_EQ(panel.seriesPenOf("alpha (C)").style(), Qt::DotLine);
    EXPECT_EQ(panel.seriesPenOf("beta (B)").style(), Qt::DashLine);
    EXPECT_EQ(panel.seriesPenOf("beta (B)").color(), methodColor("beta"));
}

TEST(PlotPanelCaption, ACaptionIsKeptAndRemoved) {
    liftlab::LossCurvePanel panel;
    panel.resize(400, 300);
    panel.setCaption(QStringLiteral("How to read this figure: lower is better."));
    EXPECT_EQ(panel.caption(), QStringLiteral("How to read this figure: lower is better."));
    panel.setCaption(QString());
    EXPECT_TRUE(panel.caption().isEmpty());
    panel.setEmptyNote(QStringLiteral("nothing yet"));
    EXPECT_EQ(panel.emptyNote(), QStringLiteral("nothing yet"));
}
