// The data of one curve of LossCurvePanel, apart from its drawing: the points a method was given
// (in step order), their debiased exponential moving average, an optional band, the nearest
// recorded point to a step, and the rows of the panel's CSV export. Uses Qt Core containers only
// (QVector, QString) — no widgets, no QCustomPlot — so it is unit-tested without a plot
// (tests/widgets/test_curve_series.cpp).
//
// Smoothing is TensorBoard's debiased EMA with weight w, over the finite values in step order:
//     m_0 = 0,   m_k = w·m_{k-1} + (1 − w)·x_k,   s_k = m_k / (1 − w^k)
// (k counts finite values only; a NaN/inf value gets no smoothed value and does not advance k).
#pragma once
#include <QString>
#include <QVector>

namespace liftlab {

class CurveSeries {
public:
    // The largest EMA weight: w = 1 would freeze the average at its first value.
    static constexpr double kMaxSmoothing = 0.999;
    // w clamped to [0, kMaxSmoothing]; NaN/inf → 0 (off).
    static double clampSmoothing(double weight);

    // Appends points (points whose step is not finite are dropped). Points after the last kept
    // step extend the data and the EMA; earlier ones are merged in step order (stable: equal
    // steps keep their arrival order) and the EMA is recomputed. Returns the index of the first
    // point that may have changed: size() before the call when appended, 0 after a merge, and
    // size() when nothing was added.
    int append(const QVector<double>& steps, const QVector<double>& values);
    // The EMA weight (already clamped, 0 = off); recomputes the smoothed values.
    void setSmoothing(double weight);
    double smoothing() const { return weight_; }

    int size() const { return steps_.size(); }
    const QVector<double>& steps() const { return steps_; }
    const QVector<double>& values() const { return values_; }
    // The EMA per point (NaN for a non-finite value); empty while smoothing is off.
    const QVector<double>& smoothed() const { return smoothed_; }

    // Replaces the band (points with a non-finite step dropped; sorted by step, stable).
    void setBand(const QVector<double>& steps, const QVector<double>& lo,
                 const QVector<double>& hi);
    bool hasBand() const { return hasBand_; }
    const QVector<double>& bandSteps() const { return bandSteps_; }
    const QVector<double>& bandLo() const { return bandLo_; }
    const QVector<double>& bandHi() const { return bandHi_; }

    // Index of the point nearest to `step` among those with a finite value, -1 if there is none.
    // A tie goes to the earlier step.
    int nearestFinite(double step) const;

    // The points from index `from` on that `keep` accepts, as (steps, values); `smoothedValues`
    // picks the EMA instead of the raw values.
    template <class Keep>
    void drawable(int from, bool smoothedValues, Keep keep, QVector<double>* keys,
                  QVector<double>* vals) const {
        const QVector<double>& y = smoothedValues ? smoothed_ : values_;
        for (int i = from; i < steps_.size() && i < y.size(); ++i) {
            if (!keep(y[i])) continue;
            keys->push_back(steps_[i]);
            vals->push_back(y[i]);
        }
    }

    // One CSV row per point, then band steps without a point get a row of their own with an
    // empty value; a band value goes to the first row at its step still without one. Sorted by
    // step (stable) when there is a band. Cells: numbers in the shortest round-trip form, NaN
    // "nan", ±inf "inf"/"-inf"; an empty cell where there is nothing.
    struct CsvRow {
        double step = 0;
        QString value, smoothed, lo, hi;
    };
    QVector<CsvRow> csvRows() const;

    // The shortest text that reads back to the same double; "nan", "inf", "-inf" otherwise.
    static QString exactNumber(double v);
    // A CSV field, quoted when it holds a comma, a quote or a line break.
    static QString csvField(const QString& text);

private:
    void extendSmoothed(int from);

    QVector<double> steps_, values_, smoothed_;
    double weight_ = 0.0;
    double emaLast_ = 0.0;  // EMA state after the last point
    int emaCount_ = 0;
    bool hasBand_ = false;
    QVector<double> bandSteps_, bandLo_, bandHi_;
};

}  // namespace liftlab
