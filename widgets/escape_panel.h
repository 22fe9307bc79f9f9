// Escape from the readout shoulder (docs/methods.md §4.2): a constrained weight is
// θ = softplus(θ̃), and a coordinate is in the shoulder when sigmoid(θ̃) < 0.05, i.e.
// θ̃ < log(0.05/0.95) ≈ −2.944, where softplus′ = sigmoid attenuates its update ≥ 20×.
// One figure, three panels:
//   top (full width)  — traces θ̃(step) of selected coordinates over the shaded shoulder band
//                       (lifter coordinates cycle in and out, direct-softplus ones are absorbed);
//                       several coordinates of one method share its colour at varied lightness;
//   bottom left       — shoulder occupancy (fraction of coordinates in the shoulder) per method;
//   bottom right      — completed dwell times (steps in the shoulder before an exit), log-spaced
//                       shared bins, as each method's share of its exits (or raw counts), with a
//                       dashed line at each method's median dwell; the key below the panels
//                       reads exit rate, exits and median dwell per method.
// For pgd the shoulder is θ = 0 exactly: show θ traces with setShoulderThreshold(0) and a label.
#pragma once
#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "plot_panel.h"

class QCustomPlot;
class QResizeEvent;
class QCPAxisRect;
class QCPGraph;
class QCPItemRect;
class QCPItemStraightLine;
class QCPItemText;
class QCPLegend;
class QCPTextElement;

namespace liftlab {

class EscapePanel : public PlotPanel {
    Q_OBJECT
public:
    explicit EscapePanel(QWidget* parent = nullptr);

    // θ̃ of one coordinate over steps; a second call for the same (method, coordinate) replaces
    // it. Points with a non-finite step or value are skipped.
    void addTrace(const QString& method, int coordinate, const QVector<double>& steps,
                  const QVector<double>& values);
    // The same, appended after the trace's points so far (live traces: only new points come).
    void appendTrace(const QString& method, int coordinate, const QVector<double>& steps,
                     const QVector<double>& values);
    // Upper edge of the shaded shoulder band in θ̃ units (default log(0.05/0.95) ≈ −2.944).
    void setShoulderThreshold(double upper);
    double shoulderThreshold() const { return threshold_; }
    // Text inside the band (default "shoulder σ(θ̃) < 0.05").
    void setShoulderLabel(const QString& label);
    // Fraction of coordinates in the shoulder over steps; replaces the method's previous curve.
    void setOccupancy(const QString& method, const QVector<double>& steps,
                      const QVector<double>& fraction);
    // Completed dwell times in steps (non-positive and non-finite entries are skipped);
    // replaces the method's previous histogram. Bins are shared by all methods.
    void setDwellTimes(const QString& method, const QVector<double>& dwells);
    // The readout in the key below the panels: exits per coordinate-step in the shoulder, number of
    // completed exits, median dwell (NaN: none completed).
    void setEscapeStats(const QString& method, double exitRate, int exits, double medianDwell);
    // A push into the shoulder after `step` (issue 40, "Push into the shoulder…"): a dashed
    // vertical line at the step on the trace and occupancy axes, labelled `label`; clear()
    // removes it. From then on each method's key also reads what setPushEscaped gives.
    void setPush(double step, const QString& label);
    double pushStep() const { return pushStep_; }  // NaN without a push
    // The share of the pushed coordinates that have left the shoulder, and the exits counted
    // since the push (negative: not known), for the key.
    void setPushEscaped(const QString& method, double fraction, int exitsSince);
    // "since the push: 40 % escaped · 3 exits" ("" before any setPushEscaped of the method).
    QString pushText(const QString& method) const;
    // Dwell histogram as each method's share of its completed dwells (default) or raw counts.
    void setDwellNormalised(bool on);
    // Draws the traces of `method` only ("" for every method's): several methods of eight
    // coordinates each overlap into a tangle; one method's read. The legend follows.
    void showTracesOf(const QString& method);
    QString tracesShown() const { return traceFilter_; }
    int visibleTraceCount() const;
    QStringList traceMethods() const;  // methods with traces, in order of first appearance
    // What the three empty axes say while they hold nothing (default "no coordinate traces", …);
    // one reason for all three, e.g. why a run has no escape dynamics. "" restores the defaults.
    void setEmptyReason(const QString& reason);
    QString emptyReason() const { return emptyReason_; }
    bool isEmpty() const { return traces_.isEmpty() && occupancy_.isEmpty() && dwells_.isEmpty(); }

    void clear() override;
    int traceCount() const { return traces_.size(); }
    int occupancyCount() const { return occupancy_.size(); }
    int dwellSeriesCount() const { return dwells_.size(); }
    // "exit rate 2.14×10⁻³ /coord·step · 412 exits · median dwell 61 steps" ("" for a method
    // without stats); the rate is exits per coordinate-step spent in the shoulder.
    QString statsText(const QString& method) const;
    QVector<double> dwellBinEdges() const { return dwellEdges_; }
    // Histogram heights of the method (share or count per bin, see setDwellNormalised).
    QVector<double> dwellHeights(const QString& method) const;

    bool exportTo(const QString& path, int width, int height) override;
    QCPAxisRect* traceRect() const { return traceRect_; }
    QCPAxisRect* occupancyRect() const { return occupancyRect_; }
    QCPAxisRect* dwellRect() const { return dwellRect_; }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    // The finite points of a trace, and the trace of (method, coordinate), made on first use.
    static void finitePoints(const QVector<double>& steps, const QVector<double>& values,
                             QVector<double>* keys, QVector<double>* vals);
    QCPGraph* traceGraph(const QString& method, int coordinate);
    void traceChanged(const QString& method);

    struct Trace {
        QString method;
        int coordinate = 0;
        QCPGraph* graph = nullptr;
    };
    struct Stats {
        double exitRate = 0;
        int exits = 0;
        double medianDwell = 0;
    };

    void recolourTraces(const QString& method);
    void redrawDwells();
    void updateDwellLegend();
    void fitTraces();
    void fitOccupancy();
    void placeBand();
    void fitKeys(int width);

    QCPAxisRect* traceRect_;
    QCPAxisRect* occupancyRect_;
    QCPAxisRect* dwellRect_;
    QCPLegend* dwellLegend_;
    QCPItemRect* band_;
    QCPItemStraightLine* bandEdge_;
    QCPItemText* bandLabel_;
    QCPItemText* traceNote_;
    QCPItemText* occupancyNote_;
    QCPItemText* dwellNote_;
    double threshold_;
    bool normalised_ = true;
    QString traceFilter_;
    QString emptyReason_;
    QVector<Trace> traces_;
    QMap<QString, QCPGraph*> occupancy_;
    QMap<QString, QVector<double>> dwells_;  // finite positive dwell times per method
    QMap<QString, QCPGraph*> dwellGraphs_;   // histograms, and empty graphs for stats-only rows
    QMap<QString, Stats> stats_;
    QMap<QString, QVector<double>> dwellHeights_;
    QVector<double> dwellEdges_;
    QVector<QCPItemStraightLine*> medianLines_;
    QStringList order_;  // every method seen, in order of first appearance
    double pushStep_;
    QVector<QCPItemStraightLine*> pushLines_;
    QCPItemText* pushLabel_ = nullptr;
    QMap<QString, QPair<double, int>> pushEscaped_;  // method → (fraction escaped, exits since)
};

}  // namespace liftlab
