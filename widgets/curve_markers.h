// Vertical step markers of LossCurvePanel: a line across the plot at a step with a short label at
// its top (a setting changed, "cf-prox.lambda 1→10"; where a forked run left its parent,
// "fork @ 40"). Drawn on the plot's main layer, so exports keep them. GUI thread only.
#pragma once
#include <QColor>
#include <QString>
#include <QStringList>
#include <QVector>
#include <functional>

class QCustomPlot;
class QCPItemLine;
class QCPItemText;

namespace liftlab {

struct CurveMarker {
    double step = 0;
    QString method;  // the series whose colour the marker takes
    QString label;
    QColor colour;       // overrides the method's colour when valid
    bool solid = false;  // a solid line (the fork) instead of a dashed one (an event)
};

class CurveMarkers {
public:
    explicit CurveMarkers(QCustomPlot* plot) : plot_(plot) {}
    // Replaces the markers; `colourOf` gives a method's colour (for markers without their own).
    // Labels at the same step are stacked one line apart.
    void set(const QVector<CurveMarker>& markers,
             const std::function<QColor(const QString&)>& colourOf);
    void clear();
    int count() const { return lines_.size(); }
    QStringList labels() const;
    QColor colour(int i) const;  // invalid for an index out of range
    double step(int i) const;    // NaN for an index out of range

private:
    QCustomPlot* plot_;
    QVector<QCPItemLine*> lines_;
    QVector<QCPItemText*> texts_;
};

}  // namespace liftlab
