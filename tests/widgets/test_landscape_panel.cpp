// LandscapePanel fed synthetic bowls on both sides and three methods' paths: bookkeeping,
// axis ranges, timeline dots, hiding a side, invalid cells, export.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QFileInfo>
#include <QTemporaryDir>
#include <cmath>
#include <cstdio>
#include <limits>

#include "example_output.h"
#include "landscape_panel.h"

using liftlab::LandscapePanel;

namespace {

using liftlab::test::kNaN;
constexpr qint64 kMinLandscapeExportBytes = 5 * 1024;  // a real figure, not an empty page

struct Grid {
    int na, nb;
    double a0, a1, b0, b1;
    QVector<double> loss;
    double alpha(int ia) const { return a0 + (a1 - a0) * ia / (na - 1); }
    double beta(int ib) const { return b0 + (b1 - b0) * ib / (nb - 1); }
};

// A tilted, anisotropic bowl with its minimum `floor` at (ca, cb), plus a gentle ripple.
Grid bowl(int na, int nb, double a0, double a1, double b0, double b1, double ca, double cb,
          double floor) {
    Grid g{na, nb, a0, a1, b0, b1, {}};
    for (int ib = 0; ib < nb; ++ib)
        for (int ia = 0; ia < na; ++ia) {
            const double x = g.alpha(ia) - ca, y = g.beta(ib) - cb;
            const double u = 0.8 * x + 0.6 * y, v = -0.6 * x + 0.8 * y;
            g.loss.push_back(floor + 1.5 * u * u + 0.4 * v * v + 0.05 * std::sin(3 * x) * y * y);
        }
    return g;
}

void setGrid(LandscapePanel& panel, LandscapePanel::Side side, const Grid& g) {
    panel.setGrid(side, g.na, g.nb, g.a0, g.a1, g.b0, g.b1, g.loss);
}

struct Path {
    QVector<double> steps, alpha, beta;
};

// A spiral from (sa, sb) into (ea, eb), recorded every 50 steps from step 0 to 1000.
Path spiral(double sa, double sb, double ea, double eb, double turn) {
    Path p;
    for (int k = 0; k <= 20; ++k) {
        const double t = k / 20.0, r = 1 - t;
        const double c = std::cos(turn * t), s = std::sin(turn * t);
        const double dx = (sa - ea) * r, dy = (sb - eb) * r;
        p.steps.push_back(50.0 * k);
        p.alpha.push_back(ea + c * dx - s * dy);
        p.beta.push_back(eb + s * dx + c * dy);
    }
    return p;
}

const char* const kMethods[] = {"pgd", "softplus", "lifter"};

// Both sides with bowls and the three methods' paths; the lifted "softplus" path starts
// outside the lifted grid.
void fill(LandscapePanel& panel) {
    panel.setTitle("ICNN loss landscape (synthetic)");
    panel.setAxisLabels("PCA 1 (62%)", "PCA 2 (21%)");
    setGrid(panel, LandscapePanel::Theta, bowl(41, 41, -1, 1, -1, 1, 0.2, -0.1, 0.05));
    setGrid(panel, LandscapePanel::Lifted, bowl(25, 25, -2, 2, -1.5, 1.5, -0.3, 0.2, 0.02));
    const double turns[] = {1.5, -2.0, 0.7};
    for (int m = 0; m < 3; ++m) {
        // Each method stops a little off the minimum, as a real run would.
        const double da = 0.08 * (m - 1), db = 0.05 * (m % 2);
        const Path th = spiral(-0.8 + 0.3 * m, 0.8 - 0.5 * m, 0.2 + da, -0.1 + db, turns[m]);
        panel.addTrajectory(LandscapePanel::Theta, kMethods[m], th.steps, th.alpha, th.beta);
        const double start = m == 1 ? 3.0 : 1.6;  // beyond the lifted grid's α ∈ [-2, 2]
        const Path li = spiral(start, -1.2 + 0.6 * m, -0.3 - 2 * da, 0.2 - 2 * db, turns[m]);
        panel.addTrajectory(LandscapePanel::Lifted, kMethods[m], li.steps, li.alpha, li.beta);
    }
}

QCPRange xRange(const LandscapePanel& panel, LandscapePanel::Side side) {
    return panel.axisRect(side)->axis(QCPAxis::atBottom)->range();
}
QCPRange yRange(const LandscapePanel& panel, LandscapePanel::Side side) {
    return panel.axisRect(side)->axis(QCPAxis::atLeft)->range();
}

QCPColorMap* heatmap(const LandscapePanel& panel, LandscapePanel::Side side) {
    for (QCPAbstractPlottable* p : panel.axisRect(side)->plottables())
        if (auto* map = qobject_cast<QCPColorMap*>(p)) return map;
    return nullptr;
}

}  // namespace

TEST(LandscapePanel, BothSidesWithGridsContoursAndOneLegendEntryPerMethod) {
    LandscapePanel panel;
    EXPECT_FALSE(panel.hasGrid(LandscapePanel::Theta));
    fill(panel);
    for (auto side : {LandscapePanel::Theta, LandscapePanel::Lifted}) {
        EXPECT_TRUE(panel.hasGrid(side));
        EXPECT_EQ(panel.trajectoryCount(side), 3);
        EXPECT_GT(panel.contourSegmentCount(side), 50);
        EXPECT_TRUE(panel.logColor(side));  // every value > 0: log colours by default
        EXPECT_TRUE(panel.sideVisible(side));
    }
    // Axes cover each grid (the lifted one also the path that starts at α = 3).
    EXPECT_LE(xRange(panel, LandscapePanel::Theta).lower, -1.0);
    EXPECT_GE(xRange(panel, LandscapePanel::Theta).upper, 1.0);
    EXPECT_LE(yRange(panel, LandscapePanel::Theta).lower, -1.0);
    EXPECT_GE(yRange(panel, LandscapePanel::Theta).upper, 1.0);
    EXPECT_LT(xRange(panel, LandscapePanel::Theta).upper, 1.2);  // but no empty band around it
    EXPECT_LE(xRange(panel, LandscapePanel::Lifted).lower, -2.0);
    EXPECT_GT(xRange(panel, LandscapePanel::Lifted).upper, 3.0);
    EXPECT_LE(yRange(panel, LandscapePanel::Lifted).lower, -1.5);
    EXPECT_GE(yRange(panel, LandscapePanel::Lifted).upper, 1.5);

    // The cross sits on the smallest grid value: the bowl's centre (0.2, -0.1) is a grid point.
    const QPointF m = panel.gridMinimum(LandscapePanel::Theta);
    EXPECT_NEAR(m.x(), 0.2, 1e-9);
    EXPECT_NEAR(m.y(), -0.1, 1e-9);

    // One legend entry per method (not per side), then the marker key and the grid minimum.
    QStringList names;
    QCPLegend* legend = panel.plot()->legend;
    for (int i = 0; i < legend->itemCount(); ++i) {
        auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
        ASSERT_NE(item, nullptr);
        names << item->plottable()->name();
    }
    EXPECT_EQ(names, (QStringList{"pgd", "softplus", "lifter", "start", "end", "last step",
                                  "grid minimum"}));
    EXPECT_EQ(panel.methods(), (QStringList{"pgd", "softplus", "lifter"}));

    // Re-adding a method's path replaces it.
    const Path p = spiral(0.5, 0.5, 0.2, -0.1, 1.0);
    panel.addTrajectory(LandscapePanel::Theta, "lifter", p.steps, p.alpha, p.beta);
    EXPECT_EQ(panel.trajectoryCount(LandscapePanel::Theta), 3);
    EXPECT_EQ(legend->itemCount(), 7);
}

TEST(LandscapePanel, GridIsRowMajorWithAlphaAlongX) {
    LandscapePanel panel;
    // Nothing is drawn before a grid arrives (a fresh QCPColorMap would hold 10 × 10 zeros).
    ASSERT_NE(heatmap(panel, LandscapePanel::Lifted), nullptr);
    EXPECT_TRUE(heatmap(panel, LandscapePanel::Lifted)->data()->isEmpty());
    // 7 α points over [10, 16], 4 β points over [-3, 0]: loss = (α − 12)² + 10 (β + 1)² + 1.
    Grid g{7, 4, 10, 16, -3, 0, {}};
    for (int ib = 0; ib < g.nb; ++ib)
        for (int ia = 0; ia < g.na; ++ia) {
            const double a = g.alpha(ia) - 12, b = g.beta(ib) + 1;
            g.loss.push_back(a * a + 10 * b * b + 1);
        }
    setGrid(panel, LandscapePanel::Lifted, g);
    QCPColorMapData* data = heatmap(panel, LandscapePanel::Lifted)->data();
    ASSERT_EQ(data->keySize(), 7);
    ASSERT_EQ(data->valueSize(), 4);
    for (int ib = 0; ib < g.nb; ++ib)
        for (int ia = 0; ia < g.na; ++ia)
            EXPECT_DOUBLE_EQ(data->data(g.alpha(ia), g.beta(ib)), g.loss[ib * g.na + ia]);
    EXPECT_EQ(panel.gridMinimum(LandscapePanel::Lifted), QPointF(12, -1));
    EXPECT_LE(xRange(panel, LandscapePanel::Lifted).lower, 10.0);
    EXPECT_GE(xRange(panel, LandscapePanel::Lifted).upper, 16.0);
    EXPECT_LE(yRange(panel, LandscapePanel::Lifted).lower, -3.0);
    EXPECT_GE(yRange(panel, LandscapePanel::Lifted).upper, 0.0);
    EXPECT_GT(panel.contourSegmentCount(LandscapePanel::Lifted), 0);
    EXPECT_FALSE(panel.hasGrid(LandscapePanel::Theta));
}

TEST(LandscapePanel, TimelineDotSitsAtTheLastPointNotAfterTheStep) {
    LandscapePanel panel;
    // Out of order and with a NaN point: drawn in step order, the NaN point skipped.
    const QVector<double> steps = {300, 100, 200, 400, 250};
    const QVector<double> alpha = {3.0, 1.0, 2.0, 4.0, kNaN};
    const QVector<double> beta = {-3.0, -1.0, -2.0, -4.0, 0.0};
    panel.addTrajectory(LandscapePanel::Theta, "adam", steps, alpha, beta);
    panel.addTrajectory(LandscapePanel::Lifted, "adam", {0, 500}, {7, 8}, {9, 10});

    auto at = [&](double step, LandscapePanel::Side side = LandscapePanel::Theta) {
        panel.setTimelineStep(step);
        return panel.timelineMarker(side, "adam");
    };
    EXPECT_EQ(at(-1), QPointF(4, -4));   // the last point
    EXPECT_EQ(at(100), QPointF(1, -1));  // exactly on a step
    EXPECT_EQ(at(299), QPointF(2, -2));  // step 250 was the NaN point: 200 is the last valid
    EXPECT_EQ(at(350), QPointF(3, -3));
    EXPECT_EQ(at(1e9), QPointF(4, -4));
    EXPECT_EQ(at(499, LandscapePanel::Lifted), QPointF(7, 9));
    EXPECT_EQ(at(500, LandscapePanel::Lifted), QPointF(8, 10));
    // Before the first recorded step there is no dot.
    EXPECT_TRUE(std::isnan(at(50).x()));
    EXPECT_EQ(at(0, LandscapePanel::Lifted), QPointF(7, 9));
    EXPECT_TRUE(std::isnan(panel.timelineMarker(LandscapePanel::Theta, "no-such").x()));
    // A path without a grid: the axes follow the path.
    panel.setTimelineStep(-1);
    EXPECT_LE(xRange(panel, LandscapePanel::Theta).lower, 1.0);
    EXPECT_GE(xRange(panel, LandscapePanel::Theta).upper, 4.0);
    EXPECT_LE(yRange(panel, LandscapePanel::Theta).lower, -4.0);
    EXPECT_GE(yRange(panel, LandscapePanel::Theta).upper, -1.0);
}

TEST(LandscapePanel, HidingASideGivesTheOtherTheFullWidth) {
    LandscapePanel panel;
    fill(panel);
    QCPAxisRect* theta = panel.axisRect(LandscapePanel::Theta);
    QCPAxisRect* lifted = panel.axisRect(LandscapePanel::Lifted);
    panel.plot()->toPixmap(1400, 620);  // lays the plot out at that size
    const int bothWidth = theta->outerRect().width();
    EXPECT_LT(bothWidth, 700);
    EXPECT_GT(lifted->outerRect().left(), theta->outerRect().right());

    panel.setSideVisible(LandscapePanel::Lifted, false);
    EXPECT_FALSE(panel.sideVisible(LandscapePanel::Lifted));
    panel.plot()->toPixmap(1400, 620);
    EXPECT_GT(theta->outerRect().width(), 1.8 * bothWidth);
    EXPECT_FALSE(lifted->realVisibility());
    EXPECT_TRUE(theta->realVisibility());
    EXPECT_EQ(panel.trajectoryCount(LandscapePanel::Lifted), 3);  // hidden, not dropped

    // The other way round, then both again.
    panel.setSideVisible(LandscapePanel::Lifted, true);
    panel.setSideVisible(LandscapePanel::Theta, false);
    panel.plot()->toPixmap(1400, 620);
    EXPECT_GT(lifted->outerRect().width(), 1.8 * bothWidth);
    EXPECT_FALSE(theta->realVisibility());
    panel.setSideVisible(LandscapePanel::Theta, true);
    panel.plot()->toPixmap(1400, 620);
    EXPECT_EQ(theta->outerRect().width(), bothWidth);
    EXPECT_LT(theta->outerRect().right(), lifted->outerRect().left());  // θ stays on the left
}

TEST(LandscapePanel, InvalidCellsAndMalformedGridsAreTolerated) {
    const double inf = std::numeric_limits<double>::infinity();
    LandscapePanel panel;
    Grid clean = bowl(41, 41, -1, 1, -1, 1, 0.0, 0.0, 0.1);
    setGrid(panel, LandscapePanel::Theta, clean);
    const int cleanSegments = panel.contourSegmentCount(LandscapePanel::Theta);

    // A diverged corner (NaN and inf cells) keeps the rest of the landscape.
    Grid holed = clean;
    for (int ib = 0; ib < holed.nb; ++ib)
        for (int ia = 0; ia < holed.na; ++ia)
            if (holed.alpha(ia) > 0.3 && holed.beta(ib) > 0.3)
                holed.loss[ib * holed.na + ia] = (ia + ib) % 2 ? kNaN : inf;
    setGrid(panel, LandscapePanel::Theta, holed);
    EXPECT_TRUE(panel.hasGrid(LandscapePanel::Theta));
    EXPECT_GT(panel.contourSegmentCount(LandscapePanel::Theta), 0);
    EXPECT_LT(panel.contourSegmentCount(LandscapePanel::Theta), cleanSegments);
    EXPECT_TRUE(panel.logColor(LandscapePanel::Theta));  // inf did not reach the colour range
    EXPECT_LT(panel.colorScale(LandscapePanel::Theta)->dataRange().upper, 10.0);

    // Malformed grids are rejected without a crash; the side shows a note.
    panel.setGrid(LandscapePanel::Lifted, 5, 5, 0, 1, 0, 1, QVector<double>(24, 1.0));
    EXPECT_FALSE(panel.hasGrid(LandscapePanel::Lifted));
    EXPECT_EQ(panel.contourSegmentCount(LandscapePanel::Lifted), 0);
    panel.setGrid(LandscapePanel::Lifted, 1, 5, 0, 1, 0, 1, QVector<double>(5, 1.0));
    EXPECT_FALSE(panel.hasGrid(LandscapePanel::Lifted));
    panel.setGrid(LandscapePanel::Lifted, 2, 2, 1, 1, 0, kNaN, {1, 2, 3, 4});
    EXPECT_FALSE(panel.hasGrid(LandscapePanel::Lifted));
    // All cells invalid: drawn grey, no contours, no minimum.
    panel.setGrid(LandscapePanel::Lifted, 3, 3, 0, 1, 0, 1, QVector<double>(9, kNaN));
    EXPECT_EQ(panel.contourSegmentCount(LandscapePanel::Lifted), 0);
    EXPECT_TRUE(std::isnan(panel.gridMinimum(LandscapePanel::Lifted).x()));
    // Mismatched path lengths use the common prefix.
    panel.addTrajectory(LandscapePanel::Lifted, "sgd", {0, 1, 2}, {0.1, 0.2}, {0.3});
    EXPECT_EQ(panel.trajectoryCount(LandscapePanel::Lifted), 1);
    EXPECT_EQ(panel.timelineMarker(LandscapePanel::Lifted, "sgd"), QPointF(0.1, 0.3));
    QTemporaryDir dir;
    EXPECT_TRUE(panel.exportTo(dir.filePath("holed.png"), 800, 400));
}

TEST(LandscapePanel, ColourScaleOptionsAndContourCount) {
    LandscapePanel panel;
    fill(panel);
    const int eight = panel.contourSegmentCount(LandscapePanel::Theta);
    panel.setContourCount(16);
    EXPECT_GT(panel.contourSegmentCount(LandscapePanel::Theta), eight);
    panel.setContourCount(0);
    EXPECT_EQ(panel.contourSegmentCount(LandscapePanel::Theta), 0);
    panel.setContourCount(8);
    EXPECT_EQ(panel.contourSegmentCount(LandscapePanel::Theta), eight);

    panel.setLogColor(false);
    EXPECT_FALSE(panel.logColor(LandscapePanel::Theta));
    EXPECT_FALSE(panel.logColor(LandscapePanel::Lifted));
    panel.setLogColor(true);
    EXPECT_TRUE(panel.logColor(LandscapePanel::Theta));
    // A landscape with values <= 0 (e.g. a negative log-likelihood) stays linear.
    Grid shifted = bowl(21, 21, -1, 1, -1, 1, 0, 0, -0.5);
    setGrid(panel, LandscapePanel::Lifted, shifted);
    EXPECT_FALSE(panel.logColor(LandscapePanel::Lifted));
    EXPECT_TRUE(panel.logColor(LandscapePanel::Theta));
    EXPECT_GT(panel.contourSegmentCount(LandscapePanel::Lifted), 0);

    // A shared range is the union of both sides' finite values.
    panel.setSharedColorRange(true);
    const QCPRange a = panel.colorScale(LandscapePanel::Theta)->dataRange();
    const QCPRange b = panel.colorScale(LandscapePanel::Lifted)->dataRange();
    EXPECT_DOUBLE_EQ(a.lower, b.lower);
    EXPECT_DOUBLE_EQ(a.upper, b.upper);
    EXPECT_NEAR(a.lower, -0.5, 1e-9);
    EXPECT_FALSE(panel.logColor(LandscapePanel::Theta));  // the union has values <= 0
}

TEST(LandscapePanel, ExportsPngSvgAndPdf) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    // LIFTLAB_KEEP_FIGURES=1 keeps the files for a look (the path is printed).
    dir.setAutoRemove(qEnvironmentVariableIsEmpty("LIFTLAB_KEEP_FIGURES"));
    if (!dir.autoRemove()) std::printf("figures in %s\n", qPrintable(dir.path()));
    LandscapePanel panel;
    fill(panel);
    panel.setTimelineStep(400);
    for (const char* ext : {"png", "svg", "pdf"}) {
        const QString path = dir.filePath(QStringLiteral("landscape.") + ext);
        EXPECT_TRUE(panel.exportTo(path, 1400, 620)) << ext;
        EXPECT_GT(QFileInfo(path).size(), kMinLandscapeExportBytes) << ext;
    }
    panel.setSideVisible(LandscapePanel::Theta, false);
    EXPECT_TRUE(panel.exportTo(dir.filePath("lifted_only.png"), 900, 620));
    EXPECT_FALSE(panel.exportTo(dir.filePath("landscape.bmpx"), 1400, 620));
    EXPECT_FALSE(panel.exportTo(dir.filePath("landscape.png"), 0, 620));
}

TEST(LandscapePanel, ClearEmptiesEverything) {
    QTemporaryDir dir;
    dir.setAutoRemove(qEnvironmentVariableIsEmpty("LIFTLAB_KEEP_FIGURES"));
    LandscapePanel panel;
    fill(panel);
    panel.clear();
    for (auto side : {LandscapePanel::Theta, LandscapePanel::Lifted}) {
        EXPECT_FALSE(panel.hasGrid(side));
        EXPECT_EQ(panel.trajectoryCount(side), 0);
        EXPECT_EQ(panel.contourSegmentCount(side), 0);
        EXPECT_TRUE(std::isnan(panel.timelineMarker(side, "pgd").x()));
        EXPECT_TRUE(std::isnan(panel.gridMinimum(side).x()));
    }
    EXPECT_TRUE(panel.methods().isEmpty());
    EXPECT_EQ(panel.plot()->legend->itemCount(), 0);
    EXPECT_TRUE(heatmap(panel, LandscapePanel::Theta)->data()->isEmpty());
    // The empty panel still exports (a note on each side), and can be filled again.
    const QString path = dir.filePath("empty.png");
    EXPECT_TRUE(panel.exportTo(path, 1400, 620));
    EXPECT_GT(QFileInfo(path).size(), 1024);
    fill(panel);
    EXPECT_EQ(panel.trajectoryCount(LandscapePanel::Lifted), 3);
    EXPECT_EQ(panel.plot()->legend->itemCount(), 7);
}
