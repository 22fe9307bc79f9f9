// A sweep's final metric against the swept value (batch size, λ, width): one line per method
// through the mean over seeds, with ± sd error bars, the x axis ticked at the swept values, and
// an optional caption under the plot (e.g. how λ scales with the batch).
#pragma once
#include <QString>
#include <QVector>
#include <QWidget>

#include "plot_panel.h"

class QCustomPlot;
class QCPTextElement;

namespace liftlab {

class SweepPanel : public PlotPanel {
    Q_OBJECT
public:
    explicit SweepPanel(QWidget* parent = nullptr);

    // Axis labels and scales; a log axis leaves out non-positive values.
    void setAxes(const QString& xLabel, const QString& yLabel, bool logX, bool logY);
    // A wrapped line of text under the plot; empty removes it.
    void setCaption(const QString& caption);
    QString caption() const;
    // One method: x (swept values), mean and sd over seeds (sd 0: no bar). Points with a
    // non-finite mean are skipped; the line connects the remaining ones in order of x.
    void addLine(const QString& method, const QVector<double>& x, const QVector<double>& mean,
                 const QVector<double>& sd);
    // A known value of the problem at each swept value (e.g. the Bayes rule's accuracy): a dashed
    // grey line with small markers, in the legend as `name`, no error bars.
    void addReferenceLine(const QString& name, const QVector<double>& x, const QVector<double>& y);

    void clear() override;
    int seriesCount() const;
    int pointCount(const QString& method) const;
    // The error bar (sd) drawn at the i-th point of a method (−1 when there is none).
    double errorAt(const QString& method, int i) const;
    // Fits the axes to the lines and bars, and puts the legend in the corner the lines cross
    // least (top right when there is a tie).
    void rescale();
    Qt::Alignment legendCorner() const;

private:
    void updateTicks();
    void placeLegend();

    QCPTextElement* caption_ = nullptr;
    bool logX_ = false, logY_ = false;
    QVector<double> xValues_;  // every swept value drawn, for the ticks
};

}  // namespace liftlab
