#include "curve_style.h"

#include <qcustomplot.h>
#include <QPainter>
#include <iterator>

#include "method_colors.h"

namespace liftlab {

namespace {

// More points than this: lines only. 400 until the engine's steps got faster (2026-12-02, our
// tanh): four live curves of 300–380 points, antialiased with markers, took 20–25 ms per replot
// and the GUI probe's longest stall passed 20 ms; at 200 the replots stay ≤ 13 ms.
constexpr int kMarkerMaxPoints = 200;
// From this many points on, markers are one pre-drawn disc image per curve instead of an
// antialiased ellipse per point: a live run's curves with a few hundred points each took 40 ms
// per replot with ellipses (bench_gui_responsiveness, issue 12), most of it the markers.
constexpr int kPixmapMarkersFrom = 48;

}  // namespace

// Members of a sweep ("cf-prox@batch_size=8") take methodColor's shade of their method's colour
// (the one sweep colour rule: every panel, pen and band alike); the n-th sweep value seen also
// gets the n-th dash pattern, so members whose shades come close stay apart.
QPen curvePen(const QString& method, QStringList* sweepSuffixes) {
    // A forked run's parent up to the fork: its method's colour, dashed and lighter.
    static const QString kParent = QStringLiteral(" (parent)");
    if (method.endsWith(kParent)) {
        QPen pen = curvePen(method.chopped(kParent.size()), sweepSuffixes);
        QColor c = pen.color();
        c.setAlpha(170);
        pen.setColor(c);
        pen.setStyle(Qt::DashLine);
        pen.setWidthF(1.6);
        return pen;
    }
    QPen pen(methodColor(method), 2.0);
    int run = -1;
    withoutRunTag(method, &run);
    if (run >= 0) {
        // Runs of a comparison: the method keeps its colour, the run has its line style.
        static const Qt::PenStyle kRunStyle[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine};
        pen.setStyle(kRunStyle[run % static_cast<int>(std::size(kRunStyle))]);
        if (run % 3 == 2) pen.setWidthF(2.4);  // dots read thinner than lines
        return pen;
    }
    const int at = method.indexOf(QLatin1Char('@'));
    if (at < 0) return pen;
    const QString suffix = method.mid(at);
    int index = sweepSuffixes->indexOf(suffix);
    if (index < 0) {
        *sweepSuffixes << suffix;
        index = sweepSuffixes->size() - 1;
    }
    static const Qt::PenStyle kStyle[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                          Qt::DashDotDotLine};
    pen.setStyle(kStyle[index % static_cast<int>(std::size(kStyle))]);
    return pen;
}

// Markers keep sparse log points visible; on dense curves they only cost time (QCustomPlot's
// adaptive sampling thins lines to the pixel grid, not scatter symbols), so they go away.
void updateCurveMarkers(QCPGraph* graph, const QPen& ownPen, int size, bool ownPenShown,
                        CurveMarkerState* state) {
    const int n = graph->dataCount();
    const bool dense = n > kMarkerMaxPoints;
    const int mode = dense ? 0 : n >= kPixmapMarkersFrom ? 2 : 1;  // none, ellipses, images
    const QColor colour = graph->pen().color();
    if (mode != state->mode || size != state->size || colour.rgba() != state->colour) {
        state->mode = mode;
        state->size = size;
        state->colour = colour.rgba();
        if (mode == 2) {
            // Drawn at twice the size and shown at half: crisp on high-density screens too.
            constexpr qreal kScale = 2.0;
            QPixmap disc(QSize(size + 1, size + 1) * kScale);
            disc.setDevicePixelRatio(kScale);
            disc.fill(Qt::transparent);
            QPainter painter(&disc);
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setPen(Qt::NoPen);
            painter.setBrush(colour);
            painter.drawEllipse(QRectF(0.5, 0.5, size, size));
            painter.end();
            graph->setScatterStyle(QCPScatterStyle(disc));
        } else {
            graph->setScatterStyle(QCPScatterStyle(
                mode == 0 ? QCPScatterStyle::ssNone : QCPScatterStyle::ssDisc, size));
        }
    }
    // Adaptive sampling keeps each pixel column's extremes, so a noisy dense curve is thousands
    // of near-vertical segments: antialiasing them is most of the redraw time (measured by
    // bench/bench_gui_responsiveness.cpp), and invisible at that density.
    graph->setAntialiased(!dense);
    if (ownPenShown) {
        QPen pen = ownPen;
        if (dense) pen.setWidthF(1.0);  // 1-px lines take the raster engine's fast path
        if (graph->pen() != pen) graph->setPen(pen);
    }
}

}  // namespace liftlab
