// One metric over training steps, one curve per method, growing live. Wraps a QCustomPlot.
// GUI-thread only, like every widget: producers hand values to the GUI thread first.
#pragma once
#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

class QCustomPlot;
class QCPGraph;
class QCPLayoutGrid;
class QCPTextElement;

namespace liftlab {

class LossCurvePanel : public QWidget {
    Q_OBJECT
public:
    explicit LossCurvePanel(QWidget* parent = nullptr);

    // The y-axis label (underscores shown as spaces).
    void setMetric(const QString& name);
    QString metric() const { return metric_; }
    // Log y axis (the default). Call before adding data: on a log axis non-positive values are
    // skipped when they arrive. NaN and ±inf are always skipped.
    void setLogY(bool on);
    bool logY() const { return logY_; }
    void setTitle(const QString& title);

    // Appends to the method's curve (created on first use, legend entry = method). Steps after
    // the points already there are appended without re-sorting the old data. Replots on the
    // next event-loop pass, so many appends in one tick cost one redraw.
    void appendPoints(const QString& method, const QVector<double>& steps,
                      const QVector<double>& values);
    // A shaded band (e.g. min..max or mean ± sd over seeds) behind the method's curve; replaces
    // any previous band of that method.
    void setBand(const QString& method, const QVector<double>& steps, const QVector<double>& lo,
                 const QVector<double>& hi);
    // A note shown after the method's legend entry, e.g. "diverged at step 12"; empty clears it.
    void setSeriesNote(const QString& method, const QString& note);

    void clear();
    int seriesCount() const;
    int pointCount(const QString& method) const;  // 0 for an unknown method
    // Fits the axes to the data and resumes following new data after a user zoom.
    void rescale();

    // Writes PNG, SVG or PDF (chosen by the extension) at width × height pixels.
    bool exportTo(const QString& path, int width, int height);

    QCustomPlot* plot() const { return plot_; }

private:
    struct Series {
        QCPGraph* graph = nullptr;
        QCPGraph* bandLo = nullptr;
        QCPGraph* bandHi = nullptr;
        QString note;
    };

    Series& ensureSeries(const QString& method);
    void updateLegendName(const QString& method);
    QPen seriesPen(const QString& method);
    void placeLegend();
    void fitAxes();
    bool keep(double value) const;
    void onUserZoom();

    QCustomPlot* plot_ = nullptr;
    QCPTextElement* title_ = nullptr;
    QHash<QString, Series> series_;
    QStringList sweepSuffixes_;              // "@key=value" parts in order of first appearance
    QCPLayoutGrid* legendColumn_ = nullptr;  // holds the legend while it sits beside the plot
    QString metric_;
    bool logY_ = true;
    bool followData_ = true;  // false once the user zooms; double-click or rescale() restores it
};

}  // namespace liftlab
