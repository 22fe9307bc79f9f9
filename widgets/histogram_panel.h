// Distributions of a scalar over seeds per method, e.g. the final test loss of the CP-Flow "basin"
// experiment (docs/methods.md §7.3): overlaid histograms on shared bins
// (semi-transparent fills under step outlines) and, below them on the same x axis, a strip with
// one lane per method showing every value as a dot and the median as a bar — with 3–10 seeds per
// method the individual values say more than the bins. Bins: Freedman–Diaconis on the pooled
// values clamped to 5..40, or a fixed count; log-spaced on a log axis (for losses spanning
// decades, e.g. 22.9 nats against 444 for direct softplus in the HEPMASS seed).
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
class QCPItemText;
class QCPTextElement;

namespace liftlab {

class HistogramPanel : public PlotPanel {
    Q_OBJECT
public:
    // What the empty histogram says (default "no samples"), e.g. that it needs several seeds.
    void setEmptyReason(const QString& reason);
    explicit HistogramPanel(QWidget* parent = nullptr);

    void setValueLabel(const QString& label);  // x axis, e.g. "test NLL (nats)"
    // Replaces the method's samples; non-finite values (and non-positive ones on a log axis)
    // are skipped. A new method is added after the others (lane order = order of arrival).
    void setSamples(const QString& method, const QVector<double>& values);
    // A fixed number of bins; 0 (the default) chooses automatically (Freedman–Diaconis, 5..40).
    void setBinCount(int bins);
    // Log x axis with log-spaced bins (samples ≤ 0 are then left out).
    void setLogScale(bool on);

    void clear() override;
    int seriesCount() const { return order_.size(); }
    QVector<double> binEdges() const { return edges_; }
    // Histogram counts of the method on binEdges() (empty for an unknown method).
    QVector<double> counts(const QString& method) const { return counts_.value(method); }
    // The samples drawn for the method (finite, and positive on a log axis).
    int sampleCount(const QString& method) const;

    bool exportTo(const QString& path, int width, int height) override;
    QCPAxisRect* histogramRect() const;
    QCPAxisRect* stripRect() const { return stripRect_; }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void redraw();
    QVector<double> drawn(const QString& method) const;

    QCPAxisRect* stripRect_;
    QCPItemText* emptyNote_;
    QStringList order_;
    QMap<QString, QVector<double>> samples_;  // as given (minus non-finite)
    QMap<QString, QVector<double>> counts_;
    QVector<double> edges_;
    int bins_ = 0;
    bool log_ = false;
};

}  // namespace liftlab
