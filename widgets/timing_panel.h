// What a training step costs, per method: wall-clock milliseconds per step as a bar split into
// the closed-form solve and everything else (forward, backward, optimizer), with ± sd over seeds.
// Shows whether the proximal or ridge solve is what makes a method slow (docs/benchmarks.md).
#pragma once
#include <QString>
#include <QVector>

#include "plot_panel.h"

class QCPBars;
class QCPErrorBars;

namespace liftlab {

class TimingPanel : public PlotPanel {
    Q_OBJECT
public:
    explicit TimingPanel(QWidget* parent = nullptr);

    // Replaces a previous bar of that method; new methods go right. `msPerStep` ≥ 0 (else
    // ignored), `sdMs` < 0 or NaN draws no error bar, `solveFraction` is clamped to [0, 1] (NaN:
    // no solve part).
    void setCost(const QString& method, double msPerStep, double sdMs, double solveFraction);

    void clear() override;
    int barCount() const { return static_cast<int>(rows_.size()); }
    // The solve part of a method's bar in ms (NaN for an unknown method).
    double solveMs(const QString& method) const;

private:
    struct Row {
        QString method;
        double ms = 0, sd = -1, solve = 0;
    };
    void redraw();

    QVector<Row> rows_;
    QCPBars* rest_ = nullptr;
    QCPBars* solve_ = nullptr;
    QCPBars* total_ = nullptr;
    QCPErrorBars* error_ = nullptr;
};

}  // namespace liftlab
