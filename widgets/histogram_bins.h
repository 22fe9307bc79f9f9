// Shared histogram arithmetic of the distribution panels: bin edges (linear or log-spaced, count by
// Freedman–Diaconis), counts, and the closed step outline QCustomPlot draws with lsStepLeft.
#pragma once
#include <QVector>

namespace liftlab {

// The finite entries of `values` (and only the positive ones when `positiveOnly`).
QVector<double> finiteValues(const QVector<double>& values, bool positiveOnly = false);

// Freedman–Diaconis: bin width 2·IQR·n^(−1/3) over [min, max], in log10 units when `log`
// (values must then be positive). A zero IQR falls back to Sturges (⌈log₂ n⌉ + 1). The count is
// clamped to [minBins, maxBins]; fewer than two distinct values give minBins.
int freedmanDiaconisBins(const QVector<double>& values, int minBins, int maxBins, bool log = false);

// `bins` + 1 increasing edges from lo to hi, equally spaced (in log10 when `log`; lo, hi > 0).
// lo == hi is widened around the value so that every bin has a positive width.
QVector<double> makeBinEdges(double lo, double hi, int bins, bool log = false);

// Counts per bin [e_i, e_{i+1}) (the last bin also holds its right edge); values outside the
// edges and non-finite values are not counted.
QVector<double> histogramCounts(const QVector<double>& values, const QVector<double>& edges);

// The closed outline of a histogram (edges.size() == heights.size() + 1) as points for a QCPGraph
// with lsStepLeft, starting and ending on zero. Pass to setData with alreadySorted = true:
// the outline repeats keys and must keep its order. With `trim`, it spans only the bins from the
// first to the last non-zero one (overlaid histograms on shared bins then do not all run along
// zero); all-zero heights give no points.
void stepOutline(const QVector<double>& edges, const QVector<double>& heights,
                 QVector<double>* keys, QVector<double>* values, bool trim = false);

// Linearly interpolated quantile q ∈ [0, 1] of `sorted` (ascending, non-empty).
double sortedQuantile(const QVector<double>& sorted, double q);

}  // namespace liftlab
