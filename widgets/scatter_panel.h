// Points per method on two (optionally log) axes, e.g. the one-step gain against κ, with an
// optional reference curve (the classical bound).
#pragma once
#include <QString>
#include <QVector>
#include <QWidget>

#include "plot_panel.h"

class QCustomPlot;
class QCPTextElement;

namespace liftlab {

class ScatterPanel : public PlotPanel {
    Q_OBJECT
public:
    explicit ScatterPanel(QWidget* parent = nullptr);

    void setAxes(const QString& xLabel, const QString& yLabel, bool logX, bool logY);
    void addPoints(const QString& method, const QVector<double>& x, const QVector<double>& y);
    // A dashed reference curve y = f(x) sampled at x (drawn in grey, legend `name`).
    void setReference(const QString& name, const QVector<double>& x, const QVector<double>& y);
    void clear() override;
    int seriesCount() const;
    int pointCount(const QString& method) const;
    void rescale();

private:
    bool logX_ = false, logY_ = false;
};

}  // namespace liftlab
