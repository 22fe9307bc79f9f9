// The feature spectrum over training as a film (docs/methods.md §2.1): a
// SpectrumPanel showing every method's singular values σ₁ ≥ σ₂ ≥ … at one step, a slider over the
// union of the steps any method recorded, Play/Pause (about 8 steps per second, stopping at the
// last step) and a readout giving, per method at the shown step,
//   κ = σ_max / σ_min, the condition number, where σ_min is the smallest σ_i > 1e-12·σ_max
//       (smaller ones are round-off of exact zeros: dead units, rank deficiency);
//   effective rank exp(H(p)), p_i = σ_i / Σ_j σ_j, H(p) = −Σ p_i ln p_i over every finite σ_i > 0
//       (Roy & Vetterli's entropy definition: 1 for a single direction, n for a flat spectrum).
// NaN, ±inf and negative σ are ignored by both; no usable σ gives NaN (shown as "—").
// Live: while the slider sits at its last step the timeline follows newly recorded steps; once
// scrubbed back it stays on its step until moved to the end again.
#pragma once
#include <QString>
#include <QVector>
#include <QWidget>

class QCustomPlot;
class QLabel;
class QSlider;
class QTimer;
class QToolButton;

namespace liftlab {

class SpectrumPanel;

class SpectrumTimeline : public QWidget {
    Q_OBJECT
public:
    explicit SpectrumTimeline(QWidget* parent = nullptr);

    // Records the spectrum (forwarded to the panel) and extends the slider by a new step.
    void addSpectrum(const QString& method, int step, const QVector<double>& singularValues);
    // Shows the latest recorded step at or before `step` (the first one if `step` precedes them
    // all) and moves the slider there.
    void showStep(int step);
    int shownStep() const { return shownStep_; }   // -1 while nothing is recorded
    QVector<int> steps() const { return steps_; }  // union of recorded steps, ascending
    bool live() const { return live_; }            // at the last step, following new data

    void play();  // from the shown step (from the first one if at the end) to the last one
    void pause();
    bool playing() const;

    // One line per method (legend order): "method @ step S: κ = …, effective rank … of n",
    // S being the recorded step of that method on display. "no spectra recorded" when empty.
    QString readoutText() const;
    static double conditionNumber(const QVector<double>& singularValues);
    static double effectiveRank(const QVector<double>& singularValues);

    void clear();
    bool exportTo(const QString& path, int width, int height);  // the plot, PNG/SVG/PDF

    SpectrumPanel* spectrumPanel() const { return panel_; }
    QCustomPlot* plot() const;
    QSlider* slider() const { return slider_; }
    QToolButton* playButton() const { return playButton_; }

public Q_SLOTS:
    // One recorded step on (what the play timer calls); at the last step playing stops.
    void stepForward();

Q_SIGNALS:
    void stepShown(int step);
    void playingChanged(bool playing);

private:
    void showIndex(int index);
    void updateReadout();
    void updatePlayButton();

    SpectrumPanel* panel_ = nullptr;
    QSlider* slider_ = nullptr;
    QToolButton* playButton_ = nullptr;
    QLabel* stepLabel_ = nullptr;
    QLabel* readout_ = nullptr;
    QTimer* timer_ = nullptr;
    QVector<int> steps_;
    int shownStep_ = -1;
    bool live_ = true;
};

}  // namespace liftlab
