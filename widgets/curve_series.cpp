#include "curve_series.h"

#include <QLocale>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace liftlab {

double CurveSeries::clampSmoothing(double weight) {
    return std::isfinite(weight) ? std::clamp(weight, 0.0, kMaxSmoothing) : 0.0;
}

int CurveSeries::append(const QVector<double>& steps, const QVector<double>& values) {
    const int n = std::min(steps.size(), values.size());
    QVector<double> keys, vals;
    keys.reserve(n);
    vals.reserve(n);
    for (int i = 0; i < n; ++i) {
        if (!std::isfinite(steps[i])) continue;
        keys.push_back(steps[i]);
        vals.push_back(values[i]);
    }
    if (keys.isEmpty()) return steps_.size();
    const bool after = std::is_sorted(keys.cbegin(), keys.cend()) &&
                       (steps_.isEmpty() || keys.front() >= steps_.back());
    if (after) {
        // The usual live case: extend the data and the EMA.
        const int from = steps_.size();
        steps_ += keys;
        values_ += vals;
        if (weight_ > 0) extendSmoothed(from);
        return from;
    }
    // Earlier steps: merge in step order (stable, so equal steps keep arrival order).
    const QVector<double> allSteps = steps_ + keys, allValues = values_ + vals;
    QVector<int> order(allSteps.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return allSteps[a] < allSteps[b]; });
    steps_.resize(order.size());
    values_.resize(order.size());
    for (int i = 0; i < order.size(); ++i) {
        steps_[i] = allSteps[order[i]];
        values_[i] = allValues[order[i]];
    }
    setSmoothing(weight_);
    return 0;
}

void CurveSeries::setSmoothing(double weight) {
    weight_ = clampSmoothing(weight);
    smoothed_.clear();
    emaLast_ = 0.0;
    emaCount_ = 0;
    if (weight_ > 0) extendSmoothed(0);
}

// Continues the debiased EMA (see the header) over the points from index `from` on.
void CurveSeries::extendSmoothed(int from) {
    const double w = weight_;
    smoothed_.resize(values_.size());
    for (int i = from; i < values_.size(); ++i) {
        const double x = values_[i];
        if (!std::isfinite(x)) {
            smoothed_[i] = std::numeric_limits<double>::quiet_NaN();
            continue;
        }
        emaLast_ = w * emaLast_ + (1.0 - w) * x;
        ++emaCount_;
        smoothed_[i] = emaLast_ / (1.0 - std::pow(w, emaCount_));
    }
}

void CurveSeries::setBand(const QVector<double>& steps, const QVector<double>& lo,
                          const QVector<double>& hi) {
    hasBand_ = true;
    const int n = std::min({steps.size(), lo.size(), hi.size()});
    QVector<int> order;
    for (int i = 0; i < n; ++i)
        if (std::isfinite(steps[i])) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return steps[a] < steps[b]; });
    bandSteps_.clear();
    bandLo_.clear();
    bandHi_.clear();
    for (int i : std::as_const(order)) {
        bandSteps_.push_back(steps[i]);
        bandLo_.push_back(lo[i]);
        bandHi_.push_back(hi[i]);
    }
}

int CurveSeries::nearestFinite(double step) const {
    const int at =
        static_cast<int>(std::lower_bound(steps_.begin(), steps_.end(), step) - steps_.begin());
    int left = at - 1, right = at;
    while (left >= 0 && !std::isfinite(values_[left])) --left;
    while (right < steps_.size() && !std::isfinite(values_[right])) ++right;
    if (left < 0) return right < steps_.size() ? right : -1;
    if (right >= steps_.size()) return left;
    return step - steps_[left] <= steps_[right] - step ? left : right;
}

QVector<CurveSeries::CsvRow> CurveSeries::csvRows() const {
    QVector<CsvRow> rows;
    std::map<double, QVector<int>> rowsAt;  // step → rows still without a band value
    for (int i = 0; i < steps_.size(); ++i) {
        const bool hasSmoothed = i < smoothed_.size() && std::isfinite(smoothed_[i]);
        rows.push_back({steps_[i], exactNumber(values_[i]),
                        hasSmoothed ? exactNumber(smoothed_[i]) : QString(), QString(), QString()});
        rowsAt[steps_[i]].push_back(i);
    }
    if (!hasBand_) return rows;
    for (int j = 0; j < bandSteps_.size(); ++j) {
        const QString lo = exactNumber(bandLo_[j]), hi = exactNumber(bandHi_[j]);
        auto it = rowsAt.find(bandSteps_[j]);
        if (it != rowsAt.end() && !it->second.isEmpty()) {
            CsvRow& row = rows[it->second.takeFirst()];
            row.lo = lo;
            row.hi = hi;
        } else {
            rows.push_back({bandSteps_[j], QString(), QString(), lo, hi});
        }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const CsvRow& a, const CsvRow& b) { return a.step < b.step; });
    return rows;
}

QString CurveSeries::exactNumber(double v) {
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

QString CurveSeries::csvField(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) &&
        !text.contains(QLatin1Char('\n')) && !text.contains(QLatin1Char('\r')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

}  // namespace liftlab
