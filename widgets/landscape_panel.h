// Loss landscapes of an ICNN in its two coordinate systems, side by side (docs/methods.md
// §7, after Li et al. 2018): left the θ-space of the effective constrained weights,
// right the lifted space (hypernetwork parameters φ and slack b). Each side is a 2-D slice
// loss(p* + α d1 + β d2) sampled on a grid, drawn as a heatmap with a colour scale ("loss", log
// by default when every value is > 0), iso-loss contours, a small cross on the grid minimum, and
// the training trajectory of every method projected onto the same plane (least squares):
// an open circle at the start, a star at the end and a filled dot at the timeline step.
// A method keeps its colour (methodColor) on both sides and has one legend entry.
// GUI-thread only; NaN/inf loss cells are drawn grey and never reach the contours or the scale.
#pragma once
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>
#include <array>

#include "contour.h"
#include "plot_panel.h"

class QCustomPlot;
class QCPAxisRect;
class QCPColorMap;
class QCPColorScale;
class QCPCurve;
class QCPGraph;
class QCPItemText;
class QCPLayoutGrid;
class QCPMarginGroup;
class QCPTextElement;

namespace liftlab {

class ContourLines;  // the contour overlay, a plottable drawing plain segments

class LandscapePanel : public PlotPanel {
    Q_OBJECT
public:
    enum Side { Theta = 0, Lifted = 1 };

    explicit LandscapePanel(QWidget* parent = nullptr);

    // Defaults "θ-space (constrained weights)" and "lifted space (φ, b)".
    void setSideTitle(Side side, const QString& title);
    // loss is row-major, loss[ib * nAlpha + ia] at (α, β) = (a0 + ia·Δα, b0 + ib·Δβ) with α
    // spanning [a0, a1] in nAlpha points and β [b0, b1] in nBeta points. NaN/inf = invalid cell
    // (grey). A malformed grid (n < 2, wrong size, empty or non-finite range) is rejected: the
    // side then shows a note instead, and hasGrid() is false.
    void setGrid(Side side, int nAlpha, int nBeta, double a0, double a1, double b0, double b1,
                 const QVector<double>& loss);
    // Log colour scale (the default) where a side's finite values are all > 0; linear otherwise.
    void setLogColor(bool on);
    // One colour range for both sides (the union), so equal colours mean equal loss.
    void setSharedColorRange(bool on);
    void setContourCount(int count);  // iso-loss lines per side (default 8; 0 hides them)
    // The projected path of `method` on `side` (replaces an earlier one of the same method).
    // Points with a non-finite step, α or β are skipped; the rest are drawn in step order.
    void addTrajectory(Side side, const QString& method, const QVector<double>& steps,
                       const QVector<double>& alpha, const QVector<double>& beta);
    // The dot on each trajectory sits at its last point with step <= `step` (< 0: its last
    // point); a trajectory that starts later has no dot yet.
    void setTimelineStep(double step);
    // Hiding one side gives the other the full width.
    void setSideVisible(Side side, bool visible);
    // e.g. "PCA 1 (62%)", "PCA 2 (21%)"; used on both sides.
    void setAxisLabels(const QString& alphaLabel, const QString& betaLabel);
    void clear() override;  // grids and trajectories; titles, labels and options stay
    // What an empty side says (default "no landscape yet"), e.g. why the run has none and what
    // to do; "" restores the default.
    void setEmptyReason(const QString& reason);
    QString emptyReason() const { return emptyReason_; }
    // Whether any side shows a grid or a trajectory.
    bool hasData() const;

    bool hasGrid(Side side) const;
    int trajectoryCount(Side side) const;
    int contourSegmentCount(Side side) const;
    bool sideVisible(Side side) const;
    bool logColor(Side side) const;  // whether that side's colour scale is logarithmic now
    QStringList methods() const { return methods_; }  // legend order
    // Where the timeline dot of `method` on `side` is drawn; (NaN, NaN) when there is none.
    QPointF timelineMarker(Side side, const QString& method) const;
    // The grid minimum marked with a cross; (NaN, NaN) without a grid.
    QPointF gridMinimum(Side side) const;
    QCPAxisRect* axisRect(Side side) const;
    QCPColorScale* colorScale(Side side) const;

    // Writes PNG, SVG or PDF (chosen by the extension) at width × height pixels.
    bool exportTo(const QString& path, int width, int height) override;

private:
    struct Trajectory {
        QString method;
        QVector<double> steps, alpha, beta;  // finite points, sorted by step
        QCPCurve* halo = nullptr;            // a wider white line under the path
        QCPCurve* line = nullptr;
        QCPGraph* start = nullptr;
        QCPGraph* end = nullptr;
        QCPGraph* now = nullptr;
    };
    struct SideView {
        QCPLayoutGrid* grid = nullptr;  // title above, heatmap and colour scale below
        QCPTextElement* title = nullptr;
        QCPAxisRect* rect = nullptr;
        QCPColorScale* scale = nullptr;
        QCPColorMap* map = nullptr;
        ContourLines* contours = nullptr;
        QCPGraph* minimum = nullptr;
        QCPItemText* note = nullptr;
        bool visible = true;
        bool inLayout = false;
        // The grid as given (valid only when hasGrid).
        bool hasGrid = false;
        int nAlpha = 0, nBeta = 0;
        double a0 = 0, a1 = 0, b0 = 0, b1 = 0;
        QVector<double> loss;
        QString problem;  // why a grid was rejected
        QVector<Trajectory> trajectories;
    };

    void setupSide(Side side);
    void layoutSides();
    void updateColors();
    void updateContours(Side side);
    void updateTimeline();
    void updateLegend();
    void updateNote(Side side);
    void fitAxes(Side side);
    void removeTrajectory(Trajectory& t);
    bool finiteRange(Side side, double* lo, double* hi) const;

    QCPLayoutGrid* sidesRow_ = nullptr;
    QCPMarginGroup* margins_ = nullptr;
    std::array<SideView, 2> sides_;
    QString emptyReason_;  // what an empty side says ("" = "no landscape yet")
    QStringList methods_;
    // Grey legend entries explaining the markers.
    QCPGraph* keyStart_ = nullptr;
    QCPGraph* keyEnd_ = nullptr;
    QCPGraph* keyNow_ = nullptr;
    QCPGraph* keyMinimum_ = nullptr;
    bool logRequested_ = true;
    bool sharedRange_ = false;
    int contourCount_ = 8;
    double timelineStep_ = -1;
};

}  // namespace liftlab
