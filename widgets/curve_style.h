// How LossCurvePanel draws a curve: the pen of a label and the point markers for its density.
// GUI thread only.
#pragma once
#include <QPen>
#include <QRgb>
#include <QString>
#include <QStringList>

class QCPGraph;

namespace liftlab {

// The pen of a curve label: its method's colour (methodColor), 2 px. A run tag ("adam (B)")
// gives its run's line style (solid, dashed, dotted for A, B, C); a sweep member
// ("cf-prox@batch_size=8") the n-th dash pattern for the n-th sweep suffix seen, which
// `sweepSuffixes` keeps in order of first appearance.
// A forked run's parent's curve ("adam (parent)") is drawn dashed in the method's colour, lighter.
QPen curvePen(const QString& label, QStringList* sweepSuffixes);

// The markers drawn now on a graph (so a restyle happens only when something changed).
struct CurveMarkerState {
    int mode = -1, size = 0;
    QRgb colour = 0;
};
// Markers of `size` px for the graph's point count: discs while sparse (pre-drawn images from a
// few dozen points on), none on a dense curve, which is also drawn without antialiasing and,
// when `ownPenShown` (the graph is drawn in `ownPen`, not faint behind its EMA), 1 px wide.
void updateCurveMarkers(QCPGraph* graph, const QPen& ownPen, int size, bool ownPenShown,
                        CurveMarkerState* state);

}  // namespace liftlab
