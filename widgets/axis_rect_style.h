// The lab look for the extra axis rects of a multi-panel figure (applyLabStyle styles only the
// default rect): closed box with linked opposite axes, grids, a centred "no data" note, and
// legends in rows of their own (keys outside the axes never hide data).
#pragma once
#include <QString>

class QCustomPlot;
class QCPAxisRect;
class QCPItemText;
class QCPLegend;

namespace liftlab {

// Grid pens as in applyLabStyle, top/right axes shown without labels and following bottom/left.
void styleAxisRect(QCPAxisRect* rect);
// A grey note in the middle of `rect` (e.g. "no data"), clipped to it; hide it once data arrives.
QCPItemText* addEmptyNote(QCustomPlot* plot, QCPAxisRect* rect, const QString& text);
// Puts `legend` (taken out of wherever it was) at its natural width, centred, into a new row
// `row` of the plot layout (inserted there; rows below move down), borderless and transparent.
void addCentredLegendRow(QCustomPlot* plot, int row, QCPLegend* legend);
// Lays the legend's entries out in as many columns (at most `maxColumns`, filled row by row)
// as fit in `width` pixels, so that a long key wraps instead of being cut off.
void fitLegendColumns(QCPLegend* legend, int width, int maxColumns);

}  // namespace liftlab
