// One metric over training steps, one curve per method, growing live. Wraps a QCustomPlot.
// Comparing runs, a label with a run tag ("adam (B)") keeps its method's colour and takes its
// run's line style (solid, dashed, dotted for runs A, B, C).
// GUI-thread only, like every widget: producers hand values to the GUI thread first.
//
// Smoothing is TensorBoard's debiased exponential moving average (CurveSeries, curve_series.h,
// holds each curve's data, its EMA and its CSV rows). While it is on, s is drawn in the method
// colour and the raw curve stays behind it, faint.
//
// A crosshair (CurveCrosshair, curve_crosshair.h) follows the mouse over the plot: a vertical line
// at the cursor's step and a box with, per method, the value at the recorded step nearest to it
// (and its smoothed value). Left drag zooms into a rectangle, the wheel zooms, a double-click shows
// everything again.
#pragma once
#include <QHash>
#include <QPen>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>
#include <limits>
#include <memory>

#include "curve_crosshair.h"
#include "curve_markers.h"
#include "curve_series.h"
#include "curve_style.h"
#include "plot_panel.h"

class QCustomPlot;
class QCPGraph;
class QCPItemLine;
class QCPItemText;
class QCPItemTracer;
class QCPLayoutGrid;
class QCPTextElement;
class QMenu;
class QMouseEvent;

namespace liftlab {

class LossCurvePanel : public PlotPanel {
    Q_OBJECT
public:
    explicit LossCurvePanel(QWidget* parent = nullptr);

    // The metric shown; it is the y-axis label too (underscores shown as spaces).
    void setMetric(const QString& name);
    // A y-axis label other than the metric's name (e.g. which loss each method's value is); the
    // next setMetric() replaces it.
    void setAxisLabel(const QString& label);
    QString axisLabel() const;
    QString metric() const { return metric_; }
    // Log y axis (the default). On a log axis non-positive values are not drawn; switching
    // later re-filters the data kept per method, so they come back on a linear axis. NaN and
    // ±inf are never drawn.
    void setLogY(bool on);
    bool logY() const { return logY_; }

    // Appends to the method's curve (created on first use, legend entry = method). Steps after
    // the points already there are appended without re-sorting the old data (earlier steps are
    // merged in step order). Replots on the next event-loop pass, so many appends in one tick
    // cost one redraw.
    void appendPoints(const QString& method, const QVector<double>& steps,
                      const QVector<double>& values);
    // A shaded band (e.g. min..max or mean ± sd over seeds) behind the method's curve; replaces
    // any previous band of that method. Smoothing does not touch it.
    void setBand(const QString& method, const QVector<double>& steps, const QVector<double>& lo,
                 const QVector<double>& hi);
    // A note shown after the method's legend entry, e.g. "diverged at step 12"; empty clears it.
    void setSeriesNote(const QString& method, const QString& note);

    // EMA weight w in [0, 0.999] (0 = off, the default; 0.6–0.99 are usual). Out-of-range
    // values are clamped, NaN means off. Applies to the data already there and to later data.
    void setSmoothing(double weight);
    double smoothing() const { return smoothing_; }

    // Crosshair and value readout under the mouse (on by default).
    void setCrosshairEnabled(bool on);
    bool crosshairEnabled() const { return crosshairEnabled_; }
    // The readout text for a cursor at `step`: a "step N" line, then one line per method in
    // legend order, "method @S: v" or, with smoothing on, "method @S: v (smoothed s)", where S
    // is the recorded step nearest to `step` with a finite value and v, s are printed with 5
    // significant digits; "method: —" when the method has no finite value. Empty without series.
    QString readoutAt(double step) const;
    // Pins the crosshair at `step` (kept in exports, e.g. for a figure) until hideCrosshair();
    // the crosshair that follows the mouse is left out of exports and the clipboard.
    void showCrosshairAt(double step);
    void hideCrosshair();
    bool crosshairVisible() const;
    QString crosshairText() const;  // the readout being shown, empty when hidden

    // Markers (curve_markers.h): events (a run folder's events.csv: a setting changed after a
    // step), a vertical dashed line at each event's step in its method's colour, with a short
    // label at the top of the plot ("cf-prox.lambda 1→10"); the fork of a child run, a solid
    // line ("fork @ 40"). Drawn on the main layer, so exports keep them. Replaces earlier
    // markers; clear() removes them too.
    using EventMarker = CurveMarker;
    void setEventMarkers(const QVector<EventMarker>& markers);
    int eventMarkerCount() const;
    QStringList eventMarkerLabels() const;
    // The colour and step of marker `i` (tests).
    QColor eventMarkerColour(int i) const;
    double eventMarkerStep(int i) const;

    // Removes every series and event marker; the settings (metric, log y, smoothing, crosshair)
    // stay.
    void clear() override;
    int seriesCount() const;
    int pointCount(const QString& method) const;  // 0 for an unknown method
    // The drawn curves of a method, for tests: raw values, and the EMA (nullptr while smoothing
    // is off). nullptr for an unknown method.
    QCPGraph* rawGraph(const QString& method) const;
    // The pen a series is drawn with (its method's colour; the line style of its run when the
    // label carries a run tag, "adam (B)": solid for A, dashed for B, dotted for C). A default
    // pen for an unknown series.
    QPen seriesPenOf(const QString& method) const;
    QCPGraph* smoothedGraph(const QString& method) const;
    // Fits the axes to the data and resumes following new data after a user zoom.
    void rescale();

    // Writes PNG, SVG or PDF (chosen by the extension) at width × height pixels.
    bool exportTo(const QString& path, int width, int height) override;
    // Long-format CSV of every method's raw data in legend order, step order within a method:
    // header "method,step,value" + ",smoothed" while smoothing is on + ",band_lo,band_hi" when
    // some method has a band. Band cells are empty where the method has no band value at that
    // step; band steps without a recorded value get a row with an empty value. Numbers are
    // written round-trip exact (shortest form), NaN as "nan", ±inf as "inf"/"-inf". False if the
    // file cannot be written.
    bool exportCsv(const QString& path) const;
    // Puts a width × height PNG rendering of the plot on the system clipboard.
    void copyToClipboard(int width, int height);
    // The right-click menu (also built on demand by the plot): copy image, save figure / CSV,
    // log y, smoothing presets, crosshair, reset zoom; with a fork offer (setForkOffer) and a
    // step (the one under the mouse), "Fork from step N…" first. The caller owns the menu.
    QMenu* createContextMenu(QWidget* parent,
                             double step = std::numeric_limits<double>::quiet_NaN());
    // Whether the menu offers "Fork from step N…" (the window: one run folder shown), enabled
    // when `whyNot` is empty, else disabled with `whyNot` as its tooltip. Off by default.
    void setForkOffer(bool offered, const QString& whyNot = QString());
    bool forkOffered() const { return forkOffered_; }

Q_SIGNALS:
    // The y axis switched between log and linear (setLogY: a metric change, the menu), so a
    // check box beside the plot can follow it.
    void logYChanged(bool on);
    // "Fork from step N…" was chosen (N: the step under the mouse, rounded, at least 0).
    void forkRequested(int step);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Series {
        QCPGraph* graph = nullptr;   // raw values (faint while smoothing is on)
        QCPGraph* smooth = nullptr;  // the EMA, while smoothing is on
        QCPGraph* bandLo = nullptr;
        QCPGraph* bandHi = nullptr;
        QString note;
        QPen pen;
        // Everything the method was given, so a change of axis or smoothing re-filters from the
        // data rather than from what happens to be drawn.
        CurveSeries data;
        CurveMarkerState markers;  // the markers drawn now (updateMarkers)
    };

    Series& ensureSeries(const QString& method);
    void updateLegendName(const QString& method);
    void rebuildLegend();
    QPen seriesPen(const QString& method);
    void applySeriesStyle(Series& s);
    void updateMarkers(Series& s);
    void placeLegend();
    void fitAxes();
    bool keep(double value) const;
    void onUserZoom();
    void redrawSeries(Series& s);
    void redrawBand(Series& s);
    void onMouseMove(QMouseEvent* event);
    void placeCrosshair(double step);
    void refreshCrosshair();

    QHash<QString, Series> series_;
    QStringList order_;                      // methods in order of first appearance
    QStringList sweepSuffixes_;              // "@key=value" parts in order of first appearance
    QCPLayoutGrid* legendColumn_ = nullptr;  // holds the legend while it sits beside the plot
    QString metric_;
    bool logY_ = true;
    bool followData_ = true;  // false once the user zooms; double-click or rescale() restores it
    double smoothing_ = 0.0;

    bool crosshairEnabled_ = true;
    bool crosshairPinned_ = false;  // placed by showCrosshairAt: stays and is exported
    std::unique_ptr<CurveCrosshair> crosshair_;
    std::unique_ptr<CurveMarkers> markers_;
    bool forkOffered_ = false;
    QString forkWhyNot_;
};

}  // namespace liftlab
