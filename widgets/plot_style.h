// Shared look and export of every LiftLab plot: light background, closed box, grids, legend top
// right; PNG/SVG/PDF chosen by file extension.
#pragma once
#include <QString>

#include <limits>

class QCustomPlot;
class QCPTextElement;

namespace liftlab {

// Values the panels plot with: a curve gap, log-axis head-room, when an x axis starts at 0.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();  // a gap in a curve
inline constexpr double kLogMargin = 1.15;  // multiplicative head-room above/below data on log y
inline constexpr double kSnapToZeroShare = 0.15;  // x starts at 0 if the data starts this close

void applyLabStyle(QCustomPlot* plot);
// Shows `title` in a bold row above the plot (`element` remembers that row); empty removes it.
void setPlotTitle(QCustomPlot* plot, QCPTextElement*& element, const QString& title);
// Device pixels per layout pixel of PNG exports (1 by default; 2 gives a 192-dpi image of a 96-dpi
// layout: same look, sharper). SVG and PDF are vector formats and ignore it.
void setExportPixelRatio(double ratio);
double exportPixelRatio();

// Writes the plot at width × height pixels; the format follows the extension (png, svg, pdf).
bool exportPlot(QCustomPlot* plot, const QString& path, int width, int height,
                const QString& title = QString());

}  // namespace liftlab
