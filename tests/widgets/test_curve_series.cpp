// CurveSeries (widgets/curve_series.h), the data of one curve without a plot: the debiased EMA
// against its recursion worked by hand, merging earlier steps, the nearest finite point, the CSV
// rows with a band, and the number/field text of the CSV writer.
#include <gtest/gtest.h>
#include <cmath>
#include <limits>

#include "curve_series.h"
#include "example_output.h"

using liftlab::CurveSeries;
using liftlab::test::kInf;
using liftlab::test::kNaN;

namespace {

constexpr double kEmaTol = 1e-14;  // a few roundings of numbers near 1

}  // namespace

// w = 0.5 over x = 1, 2, NaN, 4: m = 0.5, 1.25, (skipped), 2.625 and the debiased
// s_k = m_k / (1 − 0.5^k) = 1, 5/3, NaN, 3 (k counts finite values only).
TEST(CurveSeries, DebiasedEmaFollowsItsRecursionAndSkipsNonFinite) {
    CurveSeries s;
    s.setSmoothing(0.5);
    EXPECT_EQ(s.append({1, 2, 3, 4}, {1, 2, kNaN, 4}), 0);
    ASSERT_EQ(s.smoothed().size(), 4);
    EXPECT_NEAR(s.smoothed()[0], 1.0, kEmaTol);
    EXPECT_NEAR(s.smoothed()[1], 5.0 / 3.0, kEmaTol);
    EXPECT_TRUE(std::isnan(s.smoothed()[2]));
    EXPECT_NEAR(s.smoothed()[3], 3.0, kEmaTol);

    // Appending continues the same average: the same as smoothing everything at once.
    EXPECT_EQ(s.append({5}, {8}), 4);
    CurveSeries whole;
    whole.append({1, 2, 3, 4, 5}, {1, 2, kNaN, 4, 8});
    whole.setSmoothing(0.5);
    ASSERT_EQ(whole.smoothed().size(), 5);
    EXPECT_NEAR(s.smoothed()[4], whole.smoothed()[4], kEmaTol);
    // m_4 = 0.5·2.625 + 0.5·8 = 5.3125; s_4 = m_4 / (1 − 1/16) = 5.666…
    EXPECT_NEAR(s.smoothed()[4], 5.3125 / (1.0 - 0.0625), kEmaTol);

    // Debiasing: a constant curve is its own average from the first point on.
    CurveSeries constant;
    constant.setSmoothing(0.99);
    constant.append({0, 1, 2}, {7, 7, 7});
    for (double v : constant.smoothed()) EXPECT_NEAR(v, 7.0, 1e-12);

    s.setSmoothing(0);
    EXPECT_TRUE(s.smoothed().isEmpty());  // off: no smoothed values kept
}

TEST(CurveSeries, ClampsTheWeight) {
    EXPECT_EQ(CurveSeries::clampSmoothing(-1), 0.0);
    EXPECT_EQ(CurveSeries::clampSmoothing(kNaN), 0.0);
    EXPECT_EQ(CurveSeries::clampSmoothing(kInf), 0.0);
    EXPECT_EQ(CurveSeries::clampSmoothing(1.0), CurveSeries::kMaxSmoothing);
    EXPECT_EQ(CurveSeries::clampSmoothing(0.6), 0.6);
}

TEST(CurveSeries, MergesEarlierStepsInOrderAndDropsNonFiniteSteps) {
    CurveSeries s;
    EXPECT_EQ(s.append({10, 20, kNaN}, {1, 2, 3}), 0);
    EXPECT_EQ(s.size(), 2);
    EXPECT_EQ(s.append({}, {}), 2);  // nothing added
    // An earlier step (and an equal one): merged in step order, arrival order kept at ties.
    EXPECT_EQ(s.append({5, 20}, {0.5, 2.5}), 0);
    EXPECT_EQ(s.steps(), (QVector<double>{5, 10, 20, 20}));
    EXPECT_EQ(s.values(), (QVector<double>{0.5, 1, 2, 2.5}));
    // Unsorted input after the end is merged too.
    s.append({40, 30}, {4, 3});
    EXPECT_EQ(s.steps(), (QVector<double>{5, 10, 20, 20, 30, 40}));
}

TEST(CurveSeries, NearestFinitePointTiesGoEarlier) {
    CurveSeries s;
    s.append({0, 10, 20, 30}, {1, kNaN, 3, 4});
    EXPECT_EQ(s.nearestFinite(-5), 0);
    EXPECT_EQ(s.nearestFinite(9), 0);   // step 10 has no finite value: 0 is 9 away, 20 is 11
    EXPECT_EQ(s.nearestFinite(10), 0);  // a tie (10 each way) goes to the earlier step
    EXPECT_EQ(s.nearestFinite(11), 2);
    EXPECT_EQ(s.nearestFinite(100), 3);
    CurveSeries none;
    none.append({1, 2}, {kNaN, kInf});
    EXPECT_EQ(none.nearestFinite(1), -1);
    EXPECT_EQ(CurveSeries().nearestFinite(0), -1);
}

TEST(CurveSeries, DrawablePointsFollowTheFilter) {
    CurveSeries s;
    s.append({1, 2, 3, 4}, {1, -1, kNaN, 2});
    QVector<double> keys, vals;
    s.drawable(
        0, false, [](double v) { return std::isfinite(v) && v > 0; }, &keys, &vals);
    EXPECT_EQ(keys, (QVector<double>{1, 4}));
    EXPECT_EQ(vals, (QVector<double>{1, 2}));
    keys.clear();
    vals.clear();
    s.drawable(
        2, false, [](double v) { return std::isfinite(v); }, &keys, &vals);
    EXPECT_EQ(keys, (QVector<double>{4}));
}

TEST(CurveSeries, CsvRowsPutBandValuesOnTheirStepAndAddBandOnlySteps) {
    CurveSeries s;
    s.append({10, 20}, {0.5, kNaN});
    auto rows = s.csvRows();
    ASSERT_EQ(rows.size(), 2);
    EXPECT_EQ(rows[1].value, "nan");
    EXPECT_TRUE(rows[0].lo.isEmpty() && rows[0].smoothed.isEmpty());

    // The band: step 5 has no point (a row of its own, first), steps 10 and 20 go to the points.
    s.setBand({20, 5, 10, kNaN}, {1.5, 0.1, 0.25, 9}, {2.5, 0.2, 0.75, 9});
    ASSERT_TRUE(s.hasBand());
    EXPECT_EQ(s.bandSteps(), (QVector<double>{5, 10, 20}));
    rows = s.csvRows();
    ASSERT_EQ(rows.size(), 3);
    EXPECT_EQ(rows[0].step, 5);
    EXPECT_TRUE(rows[0].value.isEmpty());
    EXPECT_EQ(rows[0].lo, "0.1");
    EXPECT_EQ(rows[1].value, "0.5");
    EXPECT_EQ(rows[1].hi, "0.75");
    EXPECT_EQ(rows[2].lo, "1.5");

    s.setSmoothing(0.5);
    rows = s.csvRows();
    EXPECT_EQ(rows[1].smoothed, "0.5");       // the first finite value is its own average
    EXPECT_TRUE(rows[2].smoothed.isEmpty());  // NaN has no smoothed value
}

TEST(CurveSeries, NumbersRoundTripAndFieldsAreQuoted) {
    for (double v : {0.1, 1.0 / 3.0, 1e-300, -2.5e17, 123456789.0}) {
        bool ok = false;
        EXPECT_EQ(CurveSeries::exactNumber(v).toDouble(&ok), v);
        EXPECT_TRUE(ok);
    }
    EXPECT_EQ(CurveSeries::exactNumber(kNaN), "nan");
    EXPECT_EQ(CurveSeries::exactNumber(kInf), "inf");
    EXPECT_EQ(CurveSeries::exactNumber(-kInf), "-inf");
    EXPECT_EQ(CurveSeries::csvField("adam"), "adam");
    EXPECT_EQ(CurveSeries::csvField("a,b"), "\"a,b\"");
    EXPECT_EQ(CurveSeries::csvField("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(CurveSeries::csvField("x\ny"), "\"x\ny\"");
}
