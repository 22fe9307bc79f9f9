// Ticks for a log axis that stay readable when the data spans few decades: QCustomPlot's log
// ticker labels only powers of ten, so a loss between 0.12 and 0.6 would get one label or none,
// and below 1.6 decades it turns linear (scientific labels, no tick at a power of ten). Below
// 3 decades this ticker labels multiples of powers of ten in plain decimals — 1-3 from 2 decades,
// 1-2-3-5 from 1, 1…9 below — and falls back to linear ticks only for ranges narrower still.
#pragma once
#include <qcustomplot.h>

namespace liftlab {

class LogAxisTicker : public QCPAxisTickerLog {
public:
    LogAxisTicker();

protected:
    QVector<double> createTickVector(double tickStep, const QCPRange& range) override;
    QVector<double> createSubTickVector(int subTickCount, const QVector<double>& ticks) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                         int precision) override;

private:
    bool decimalLabels_ = false;  // set by createTickVector for the generate() pass it is in
};

}  // namespace liftlab
