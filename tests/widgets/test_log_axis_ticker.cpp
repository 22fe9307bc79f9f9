// LogAxisTicker (widgets/log_axis_ticker.h): on a log axis spanning 0.3 to 4 decades the labelled
// ticks include every power of ten inside the range and at least three labels in all — never
// QCustomPlot's linear fallback (ticks 0.2, 0.4, … with none at 0.1), which its own log ticker
// takes below 1.6 decades.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <cmath>

#include "log_axis_ticker.h"

TEST(LogAxisTicker, EveryPowerOfTenInsideTheRangeIsALabelledTick) {
    liftlab::LogAxisTicker ticker;
    const QLocale locale(QLocale::C);
    for (const double lower : {0.035, 0.0012, 3.7}) {
        for (double decades = 0.3; decades <= 4.0 + 1e-9; decades += 0.05) {
            const QCPRange range(lower, lower * std::pow(10.0, decades));
            QVector<double> ticks;
            QVector<QString> labels;
            ticker.generate(range, locale, QLatin1Char('e'), 0, ticks, nullptr, &labels);
            ASSERT_EQ(ticks.size(), labels.size());
            int inside = 0;
            for (double t : ticks) inside += range.contains(t);
            EXPECT_GE(inside, 3) << "range " << range.lower << " … " << range.upper;
            for (int e = -6; e <= 6; ++e) {
                const double p = std::pow(10.0, e);
                if (!range.contains(p)) continue;
                bool found = false;
                for (double t : ticks) found = found || std::abs(t / p - 1) < 1e-9;
                EXPECT_TRUE(found)
                    << "no tick at 1e" << e << " on " << range.lower << " … " << range.upper;
            }
        }
    }
}
