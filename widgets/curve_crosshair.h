// The crosshair of LossCurvePanel: a dashed vertical line at a step, a box with the readout text
// beside it and a dot on each curve, all on a buffered overlay layer of the plot (following the
// mouse redraws only that layer). It only draws: the panel decides the text, the dots and when
// it shows. GUI thread only.
#pragma once
#include <QColor>
#include <QRect>
#include <QString>
#include <QVector>

class QCustomPlot;
class QCPItemLine;
class QCPItemText;
class QCPItemTracer;

namespace liftlab {

class CurveCrosshair {
public:
    // Adds its items to `plot` on `layer` (made buffered), hidden.
    CurveCrosshair(QCustomPlot* plot, const QString& layer);

    // A dot on a curve: its point, and the colour of its ring. `used` = false hides the dot.
    struct Dot {
        double step = 0, value = 0;
        QColor colour;
        bool used = false;
    };
    // Moves the line to `step` and shows `text` in a box right of the line in the left part of
    // the plot, left of it in the right part (decided on the axis range, so an export at another
    // size agrees) unless it does not fit there, and below `avoid` (the legend inside the plot;
    // an invalid rect for none) where the two would overlap. Does not change the visibility.
    void place(double step, const QString& text, const QVector<Dot>& dots, const QRect& avoid);
    void setVisible(bool on);
    bool visible() const;
    QString text() const;
    double step() const { return step_; }
    // Redraws the overlay layer only.
    void replotOverlay();

private:
    QCustomPlot* plot_;
    QString layer_;
    double step_ = 0.0;
    QCPItemLine* line_ = nullptr;
    QCPItemText* box_ = nullptr;
    QVector<QCPItemTracer*> tracers_;  // one dot per curve
    QVector<bool> used_;
};

}  // namespace liftlab
