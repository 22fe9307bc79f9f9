// Iso-lines of a function sampled on a regular grid, for the contour overlay of the loss
// landscapes (docs/methods.md §7: loss on p* + α d1 + β d2 over a grid). Plain marching
// squares with linear interpolation along cell edges; pure maths on Qt containers, no plotting.
#pragma once
#include <QVector>

namespace liftlab {

struct ContourSegment {
    double x1, y1, x2, y2;
};

// Segments of the iso-line {f = level} of a grid function. `values` is row-major: the value at
// node (ix, iy) is values[iy * nx + ix]; node ix sits at x0 + ix (x1 − x0)/(nx − 1), node iy at
// y0 + iy (y1 − y0)/(ny − 1). A node counts as "above" when its value >= level; every cell edge
// whose ends differ is crossed at the linearly interpolated point. A cell with a non-finite
// corner produces no segment. A saddle cell (the two diagonals on opposite sides) is resolved by
// the cell-centre average: the corners on the other side of the centre are cut off. Returns an
// empty list for nx < 2, ny < 2, a value count other than nx·ny or a non-finite level.
QVector<ContourSegment> contourSegments(const QVector<double>& values, int nx, int ny, double x0,
                                        double x1, double y0, double y1, double level);

// `count` contour levels strictly between the smallest and the largest finite value: geometric
// (evenly spaced in log) when logScale and the smallest finite value is > 0, else evenly spaced;
// the exact min and max are left out (their iso-lines are single points). Increasing order.
// Empty when count <= 0 or fewer than two distinct finite values.
QVector<double> contourLevels(const QVector<double>& values, int count, bool logScale);

}  // namespace liftlab
