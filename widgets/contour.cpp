#include "contour.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace liftlab {

namespace {

// Corners counter-clockwise from the lower left, edges by the corners they join:
// edge k runs from corner k to corner (k + 1) % 4 (bottom, right, top, left).
constexpr int kCornerDx[4] = {0, 1, 1, 0};
constexpr int kCornerDy[4] = {0, 0, 1, 1};

}  // namespace

QVector<ContourSegment> contourSegments(const QVector<double>& values, int nx, int ny, double x0,
                                        double x1, double y0, double y1, double level) {
    QVector<ContourSegment> out;
    if (nx < 2 || ny < 2 || values.size() != static_cast<qsizetype>(nx) * ny ||
        !std::isfinite(level))
        return out;
    const double dx = (x1 - x0) / (nx - 1);
    const double dy = (y1 - y0) / (ny - 1);
    for (int iy = 0; iy + 1 < ny; ++iy) {
        for (int ix = 0; ix + 1 < nx; ++ix) {
            double v[4];
            bool finite = true;
            for (int c = 0; c < 4; ++c) {
                v[c] = values[(iy + kCornerDy[c]) * nx + ix + kCornerDx[c]];
                finite = finite && std::isfinite(v[c]);
            }
            if (!finite) continue;
            bool above[4];
            int aboveCount = 0;
            for (int c = 0; c < 4; ++c) {
                above[c] = v[c] >= level;
                aboveCount += above[c] ? 1 : 0;
            }
            if (aboveCount == 0 || aboveCount == 4) continue;

            // Crossing point on each edge whose two corners lie on different sides.
            double px[4], py[4];
            bool crossed[4];
            for (int e = 0; e < 4; ++e) {
                const int a = e, b = (e + 1) % 4;
                crossed[e] = above[a] != above[b];
                if (!crossed[e]) continue;
                const double t = (level - v[a]) / (v[b] - v[a]);  // v[a] != v[b] here
                const double gx = kCornerDx[a] + t * (kCornerDx[b] - kCornerDx[a]);
                const double gy = kCornerDy[a] + t * (kCornerDy[b] - kCornerDy[a]);
                px[e] = x0 + (ix + gx) * dx;
                py[e] = y0 + (iy + gy) * dy;
            }
            auto join = [&](int e1, int e2) { out.push_back({px[e1], py[e1], px[e2], py[e2]}); };

            const bool saddle = aboveCount == 2 && above[0] == above[2];
            if (!saddle) {
                int first = -1;
                for (int e = 0; e < 4; ++e) {
                    if (!crossed[e]) continue;
                    if (first < 0) {
                        first = e;
                    } else {
                        join(first, e);
                        break;
                    }
                }
                continue;
            }
            // Saddle: the corners on the centre's side stay connected through the middle; each
            // of the other two is cut off by a segment joining its two edges. Corner c touches
            // edges c (leaving it) and (c + 3) % 4 (arriving at it).
            const bool centreAbove = (v[0] + v[1] + v[2] + v[3]) / 4.0 >= level;
            for (int c = 0; c < 4; ++c)
                if (above[c] != centreAbove) join((c + 3) % 4, c);
        }
    }
    return out;
}

QVector<double> contourLevels(const QVector<double>& values, int count, bool logScale) {
    QVector<double> levels;
    if (count <= 0) return levels;
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    for (const double v : values) {
        if (!std::isfinite(v)) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    if (!(lo < hi)) return levels;
    const bool geometric = logScale && lo > 0;
    const double a = geometric ? std::log(lo) : lo;
    const double b = geometric ? std::log(hi) : hi;
    for (int k = 1; k <= count; ++k) {
        const double u = a + (b - a) * k / (count + 1);
        const double level = geometric ? std::exp(u) : u;
        // Rounding in exp() must not put a level onto (or past) the excluded ends.
        if (level > lo && level < hi && (levels.isEmpty() || level > levels.back()))
            levels.push_back(level);
    }
    return levels;
}

}  // namespace liftlab
