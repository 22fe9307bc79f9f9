// Marching squares against functions whose iso-lines are known exactly: a circle, straight lines,
// a saddle; and the spacing of the automatic contour levels.
#include <gtest/gtest.h>
#include <cmath>
#include <functional>
#include <limits>

#include "contour.h"

using liftlab::contourLevels;
using liftlab::ContourSegment;
using liftlab::contourSegments;

namespace {

constexpr double kPi = 3.14159265358979323846;

// f sampled on an n × n grid over [lo, hi]², row-major (y outer).
QVector<double> sample(int n, double lo, double hi,
                       const std::function<double(double, double)>& f) {
    QVector<double> v(n * n);
    for (int iy = 0; iy < n; ++iy)
        for (int ix = 0; ix < n; ++ix) {
            const double x = lo + (hi - lo) * ix / (n - 1);
            const double y = lo + (hi - lo) * iy / (n - 1);
            v[iy * n + ix] = f(x, y);
        }
    return v;
}

double length(const ContourSegment& s) {
    return std::hypot(s.x2 - s.x1, s.y2 - s.y1);
}

}  // namespace

TEST(Contour, CircleOfParaboloidHasRightRadiusAndLength) {
    const auto f = sample(41, -1, 1, [](double x, double y) { return x * x + y * y; });
    const double r = 0.5;
    const auto segs = contourSegments(f, 41, 41, -1, 1, -1, 1, r * r);
    ASSERT_GT(segs.size(), 20);
    double total = 0;
    for (const auto& s : segs) {
        // Linear interpolation of x² between nodes 0.05 apart errs by < 0.01 in the radius.
        EXPECT_NEAR(std::hypot(s.x1, s.y1), r, 0.01);
        EXPECT_NEAR(std::hypot(s.x2, s.y2), r, 0.01);
        total += length(s);
    }
    EXPECT_NEAR(total, 2 * kPi * r, 0.02 * 2 * kPi * r);
}

TEST(Contour, PlaneGivesStraightLineAtTheLevel) {
    // f = x: the iso-line f = c is the vertical line x = c, crossing all 40 rows of cells.
    const auto f = sample(41, -1, 1, [](double x, double) { return x; });
    for (const double c : {-0.613, 0.0123, 0.237, 0.98}) {
        const auto segs = contourSegments(f, 41, 41, -1, 1, -1, 1, c);
        ASSERT_EQ(segs.size(), 40) << "level " << c;
        double spanned = 0;
        for (const auto& s : segs) {
            EXPECT_NEAR(s.x1, c, 1e-12);
            EXPECT_NEAR(s.x2, c, 1e-12);
            spanned += std::abs(s.y2 - s.y1);
        }
        EXPECT_NEAR(spanned, 2.0, 1e-12);
    }
    // A non-square grid with its own x and y ranges: f = y over x ∈ [2, 5], y ∈ [-3, 1].
    QVector<double> g;
    const int nx = 7, ny = 9;
    for (int iy = 0; iy < ny; ++iy)
        for (int ix = 0; ix < nx; ++ix) g.push_back(-3.0 + 4.0 * iy / (ny - 1));
    const auto segs = contourSegments(g, nx, ny, 2, 5, -3, 1, -0.4);
    ASSERT_EQ(segs.size(), nx - 1);
    for (const auto& s : segs) {
        EXPECT_NEAR(s.y1, -0.4, 1e-12);
        EXPECT_NEAR(s.y2, -0.4, 1e-12);
        EXPECT_GE(std::min(s.x1, s.x2), 2.0 - 1e-12);
        EXPECT_LE(std::max(s.x1, s.x2), 5.0 + 1e-12);
    }
}

TEST(Contour, NanCellsProduceNoSegments) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto clean = sample(41, -1, 1, [](double x, double y) { return x * x + y * y; });
    // Nodes from x = 0.15 on are invalid; the circle r = 0.5 crosses that region.
    const auto holed =
        sample(41, -1, 1, [nan](double x, double y) { return x > 0.12 ? nan : x * x + y * y; });
    const auto all = contourSegments(clean, 41, 41, -1, 1, -1, 1, 0.25);
    const auto some = contourSegments(holed, 41, 41, -1, 1, -1, 1, 0.25);
    ASSERT_GT(some.size(), 0);
    EXPECT_LT(some.size(), all.size());
    for (const auto& s : some) {
        // Cells touching a NaN node (x > 0.1, i.e. nodes from x = 0.15) are skipped entirely.
        EXPECT_LE(s.x1, 0.1 + 1e-12);
        EXPECT_LE(s.x2, 0.1 + 1e-12);
    }
    // An all-NaN grid and malformed input give nothing and do not crash.
    EXPECT_TRUE(contourSegments(QVector<double>(25, nan), 5, 5, 0, 1, 0, 1, 0.5).isEmpty());
    EXPECT_TRUE(contourSegments(clean, 40, 41, -1, 1, -1, 1, 0.25).isEmpty());
    EXPECT_TRUE(contourSegments(clean, 41, 41, -1, 1, -1, 1, nan).isEmpty());
    EXPECT_TRUE(contourSegments({}, 0, 0, 0, 1, 0, 1, 0.5).isEmpty());
}

TEST(Contour, SaddleResolvedByCentreAverage) {
    // One cell, corners (0,0)=1, (1,0)=0, (1,1)=1, (0,1)=0: level 0.5 separates the diagonals
    // and the centre average 0.5 >= level counts as "above", so the above corners (0,0) and
    // (1,1) stay connected and the two below corners are cut off.
    const QVector<double> v = {1, 0, 0, 1};  // row-major: (0,0), (1,0), (0,1), (1,1)
    const auto segs = contourSegments(v, 2, 2, 0, 1, 0, 1, 0.5);
    ASSERT_EQ(segs.size(), 2);
    for (const auto& s : segs) {
        // Each segment joins two edge midpoints around a below corner: (1,0) or (0,1).
        const double mx = (s.x1 + s.x2) / 2, my = (s.y1 + s.y2) / 2;
        const bool nearBottomRight = mx > 0.5 && my < 0.5;
        const bool nearTopLeft = mx < 0.5 && my > 0.5;
        EXPECT_TRUE(nearBottomRight || nearTopLeft) << mx << ", " << my;
    }
    // Level 0.6: the centre (0.5) is below, so the above corners (0,0), (1,1) are cut off.
    const auto other = contourSegments(v, 2, 2, 0, 1, 0, 1, 0.6);
    ASSERT_EQ(other.size(), 2);
    for (const auto& s : other) {
        const double mx = (s.x1 + s.x2) / 2, my = (s.y1 + s.y2) / 2;
        EXPECT_TRUE((mx < 0.5 && my < 0.5) || (mx > 0.5 && my > 0.5)) << mx << ", " << my;
    }
}

TEST(Contour, LevelsAreMonotoneInsideTheRangeAndEvenlySpaced) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const QVector<double> v = {0.01, 3.0, nan, 100.0, 0.5, std::numeric_limits<double>::infinity()};

    const auto lin = contourLevels(v, 8, false);
    ASSERT_EQ(lin.size(), 8);
    for (int i = 0; i < lin.size(); ++i) {
        EXPECT_GT(lin[i], 0.01);
        EXPECT_LT(lin[i], 100.0);
        if (i > 0) {
            EXPECT_GT(lin[i], lin[i - 1]);
            EXPECT_NEAR(lin[i] - lin[i - 1], (100.0 - 0.01) / 9, 1e-9);
        }
    }

    const auto geo = contourLevels(v, 8, true);
    ASSERT_EQ(geo.size(), 8);
    const double ratio = std::pow(100.0 / 0.01, 1.0 / 9);
    EXPECT_NEAR(geo.front(), 0.01 * ratio, 1e-9);
    for (int i = 1; i < geo.size(); ++i) EXPECT_NEAR(geo[i] / geo[i - 1], ratio, 1e-9);

    // Log requested but a value <= 0: linear spacing.
    const auto fallback = contourLevels({-1.0, 0.0, 3.0}, 3, true);
    ASSERT_EQ(fallback.size(), 3);
    EXPECT_NEAR(fallback[0], 0.0, 1e-12);
    EXPECT_NEAR(fallback[1], 1.0, 1e-12);
    EXPECT_NEAR(fallback[2], 2.0, 1e-12);

    EXPECT_TRUE(contourLevels({2.0, 2.0, nan}, 5, false).isEmpty());
    EXPECT_TRUE(contourLevels(v, 0, false).isEmpty());
    EXPECT_TRUE(contourLevels({}, 4, true).isEmpty());
}
