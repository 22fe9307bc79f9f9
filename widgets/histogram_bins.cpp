#include "histogram_bins.h"

#include <algorithm>
#include <cmath>

namespace liftlab {

QVector<double> finiteValues(const QVector<double>& values, bool positiveOnly) {
    QVector<double> out;
    out.reserve(values.size());
    for (double v : values)
        if (std::isfinite(v) && (!positiveOnly || v > 0)) out.push_back(v);
    return out;
}

double sortedQuantile(const QVector<double>& sorted, double q) {
    const double at = std::clamp(q, 0.0, 1.0) * (sorted.size() - 1);
    const int below = static_cast<int>(std::floor(at));
    const int above = std::min(below + 1, static_cast<int>(sorted.size()) - 1);
    return sorted[below] + (at - below) * (sorted[above] - sorted[below]);
}

int freedmanDiaconisBins(const QVector<double>& values, int minBins, int maxBins, bool log) {
    QVector<double> v = finiteValues(values, log);
    if (log)
        for (double& x : v) x = std::log10(x);
    std::sort(v.begin(), v.end());
    if (v.size() < 2 || v.front() == v.back()) return minBins;
    const double n = v.size();
    const double iqr = sortedQuantile(v, 0.75) - sortedQuantile(v, 0.25);
    double bins = 0;
    if (iqr > 0)
        bins = std::ceil((v.back() - v.front()) / (2.0 * iqr * std::cbrt(1.0 / n)));
    else
        bins = std::ceil(std::log2(n)) + 1;
    return static_cast<int>(std::clamp(bins, double(minBins), double(maxBins)));
}

QVector<double> makeBinEdges(double lo, double hi, int bins, bool log) {
    bins = std::max(bins, 1);
    if (hi < lo) std::swap(lo, hi);
    if (log) {
        if (!(lo > 0)) return {};
        if (lo == hi) {
            lo /= 1.5;
            hi *= 1.5;
        }
    } else if (lo == hi) {
        const double half = lo == 0 ? 0.5 : 0.05 * std::abs(lo);
        lo -= half;
        hi += half;
    }
    const double a = log ? std::log10(lo) : lo;
    const double b = log ? std::log10(hi) : hi;
    QVector<double> edges(bins + 1);
    for (int i = 0; i <= bins; ++i) {
        const double t = a + (b - a) * i / bins;
        edges[i] = log ? std::pow(10.0, t) : t;
    }
    // Rounding in pow/log must not move the outer edges inside the data.
    edges.front() = lo;
    edges.back() = hi;
    return edges;
}

QVector<double> histogramCounts(const QVector<double>& values, const QVector<double>& edges) {
    if (edges.size() < 2) return {};
    QVector<double> counts(edges.size() - 1, 0.0);
    for (double v : values) {
        if (!std::isfinite(v) || v < edges.front() || v > edges.back()) continue;
        // The first edge greater than v closes v's bin; v == last edge goes in the last bin.
        const auto it = std::upper_bound(edges.begin(), edges.end(), v);
        const int bin =
            std::min(static_cast<int>(it - edges.begin()) - 1, static_cast<int>(counts.size()) - 1);
        counts[bin] += 1;
    }
    return counts;
}

void stepOutline(const QVector<double>& edges, const QVector<double>& heights,
                 QVector<double>* keys, QVector<double>* values, bool trim) {
    keys->clear();
    values->clear();
    if (edges.size() != heights.size() + 1 || heights.isEmpty()) return;
    int first = 0, last = heights.size() - 1;
    if (trim) {
        while (first <= last && heights[first] == 0) ++first;
        while (last >= first && heights[last] == 0) --last;
        if (first > last) return;
    }
    *keys << edges[first];
    *values << 0.0;
    for (int i = first; i <= last; ++i) {
        *keys << edges[i];
        *values << heights[i];
    }
    *keys << edges[last + 1] << edges[last + 1];
    *values << heights[last] << 0.0;
}

}  // namespace liftlab
