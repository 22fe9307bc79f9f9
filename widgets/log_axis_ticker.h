// Ticks for a log axis that stay readable when the data spans less than a decade: QCustomPlot's
// log ticker labels only powers of ten, so a loss between 0.12 and 0.6 would get one label or
// none. Below 1.5 decades this ticker labels 1-2-3-5 (below one decade 1…9) multiples of powers of
// ten in plain decimals; for narrower ranges still it falls back to linear ticks.
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
