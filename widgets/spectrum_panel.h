// Singular values of the features (docs/methods.md §2.1), log scale against their
// index: one curve per method at the step being shown, or every recorded step of one method
// fading from light (early) to full colour (late) for a "spectrum over training" figure.
#pragma once
#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "plot_panel.h"

class QCustomPlot;
class QCPTextElement;

namespace liftlab {

class SpectrumPanel : public PlotPanel {
    Q_OBJECT
public:
    explicit SpectrumPanel(QWidget* parent = nullptr);

    // Records the spectrum of `method` at `step` (descending singular values).
    void addSpectrum(const QString& method, int step, const QVector<double>& singularValues);
    // Shows, for every method, its latest spectrum at or before `step` (-1: the latest).
    void showStep(int step);
    // Shows every recorded step of each method, early steps lighter (training history).
    void showHistory();
    // Normalise each spectrum by its largest value (compares shapes across methods).
    void setNormalised(bool on);

    void clear() override;
    int methodCount() const { return spectra_.size(); }
    int curveCount() const;
    QVector<int> steps(const QString& method) const;
    QStringList methods() const { return spectra_.keys(); }  // in the legend's (sorted) order
    // The spectrum recorded for `method` at exactly `step` (empty if there is none).
    QVector<double> spectrum(const QString& method, int step) const;
    // The recorded step whose spectrum is drawn for `method`: the latest at or before the shown
    // step (the latest of all in history mode or for showStep(-1); the first if the method
    // starts later than the shown step). -1 for an unknown method.
    int displayedStep(const QString& method) const;
    int shownStep() const { return shownStep_; }  // as given to showStep (-1: the latest)
    bool exportTo(const QString& path, int width, int height) override;

private:
    void redraw();
    QVector<double> prepared(const QVector<double>& sv) const;

    QMap<QString, QMap<int, QVector<double>>> spectra_;  // method → step → σ
    int shownStep_ = -1;
    bool history_ = false;
    bool normalised_ = false;
};

}  // namespace liftlab
