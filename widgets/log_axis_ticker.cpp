#include "log_axis_ticker.h"

#include <cmath>

namespace liftlab {

namespace {

constexpr double kWideDecades = 3.0;    // from here on, powers of ten alone are enough labels
constexpr double kHalfDecades = 2.0;    // from here on, 1-3 multiples (half decades)
constexpr double kMediumDecades = 1.0;  // from here on, 1-2-3-5 multiples; below, 1…9 multiples

}  // namespace

LogAxisTicker::LogAxisTicker() {
    setLogBase(10);
    setSubTickCount(8);
}

QVector<double> LogAxisTicker::createTickVector(double tickStep, const QCPRange& range) {
    decimalLabels_ = false;
    if (range.lower <= 0 || range.upper <= range.lower)
        return QCPAxisTickerLog::createTickVector(tickStep, range);
    const double decades = std::log10(range.upper / range.lower);
    if (decades >= kWideDecades) return QCPAxisTickerLog::createTickVector(tickStep, range);

    decimalLabels_ = true;
    static const QVector<double> kHalf = {1, 3};
    static const QVector<double> kFew = {1, 2, 3, 5};
    static const QVector<double> kMany = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const QVector<double>& mantissas = decades >= kHalfDecades     ? kHalf
                                       : decades >= kMediumDecades ? kFew
                                                                   : kMany;
    QVector<double> ticks;
    int inside = 0;
    const int first = static_cast<int>(std::floor(std::log10(range.lower)));
    const int last = static_cast<int>(std::ceil(std::log10(range.upper)));
    for (int e = first; e <= last; ++e) {
        for (const double m : mantissas) {
            const double t = m * std::pow(10.0, e);
            ticks.push_back(t);
            if (range.contains(t)) ++inside;
        }
    }
    if (inside >= 3) return ticks;
    // Very narrow: evenly spaced ticks read fine even on a log axis.
    return QCPAxisTicker::createTickVector(QCPAxisTicker::getTickStep(range), range);
}

QVector<double> LogAxisTicker::createSubTickVector(int subTickCount, const QVector<double>& ticks) {
    if (decimalLabels_) return {};  // the labelled ticks are already dense
    return QCPAxisTickerLog::createSubTickVector(subTickCount, ticks);
}

QString LogAxisTicker::getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                                    int precision) {
    if (decimalLabels_) return locale.toString(tick, 'g', 4);
    return QCPAxisTickerLog::getTickLabel(tick, locale, formatChar, precision);
}

}  // namespace liftlab
