// Fills the lab's panels from a run folder (RunFolderData). Used by `liftlab-cli report` to
// render figures and by the GUI to (re)open a run, so both show the same thing.
#pragma once
#include <QString>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "run_folder_data.h"

namespace liftlab {

class AblationPanel;
class EscapePanel;
class HistogramPanel;
class LossCurvePanel;
class ScatterPanel;
class SweepPanel;

// Mean over seeds of `metric` per method, with a mean ± sd band when there are several seeds.
// Labels get `suffix` appended (comparing two runs: " [run name]"). Returns the series added.
int feedCurves(LossCurvePanel& panel, const RunFolderData& run, const std::string& metric,
               const QString& suffix = QString());
// Whether a metric reads best on a log axis (losses, κ, TV) or a linear one.
bool metricPrefersLogAxis(const std::string& metric);
// The y-axis label of `metric`'s curves: the metric with spaces for underscores. For test_loss and
// train_loss of a run whose methods train on different losses (`losses`: label → loss, as
// RunFolderData::training_loss) it says which loss each method's value is — e.g. "test loss
// (cross-entropy for ce, squared error for the others)" — since the two are not comparable.
std::string curveAxisLabel(const std::string& metric,
                           const std::map<std::string, std::string>& losses);
// Whether the methods of `losses` train on more than one loss (then accuracy, not the loss,
// compares them: the curves open on test_accuracy).
bool mixedTrainingLosses(const std::map<std::string, std::string>& losses);

// Every recorded spectrum: add(method, step, σ) per spectrum (SpectrumPanel::addSpectrum or a
// timeline's). Returns the number of spectra.
int feedSpectra(const RunFolderData& run,
                const std::function<void(const QString&, int, const QVector<double>&)>& add);

// One-step gain of the closed form against κ of the batch features, with the bound κ² (λ → 0).
// Returns the methods drawn.
int feedGainScatter(ScatterPanel& panel, const RunFolderData& run);

// A sweep's final `metric` against the swept value: one line per method, mean ± sd over the
// seeds that ended ok, with a caption saying what a point is and, for batch or λ/β sweeps, how
// λ and β scale with the batch (they act on batch sums). Returns the lines drawn (0 without a
// numeric sweep).
int feedSweep(SweepPanel& panel, const RunFolderData& run, const std::string& metric);
// The final metrics a sweep figure is drawn for, in order: the task's headline metric
// (test_accuracy, test_rel_l2, else test_loss), train_set_loss when logged, then every effective
// rank the runs recorded.
std::vector<std::string> sweepMetrics(const RunFolderData& run);

// σ²_Jac bars: mean over seeds; error = the permutation null's sd (one seed) or the sd over
// seeds; label = the median p-value over seeds. A method without a slack (final `slack` = 0) is
// drawn as a structural zero ("0 — no slack": no bar, no p). `theta_gradient` picks the separate
// un-contracted diagnostic (sigma2_jac_theta: ∂ℓ/∂θ̃ at a fixed iterate), a bar for every method.
// Returns the methods drawn.
int feedAblation(AblationPanel& panel, const RunFolderData& run, bool theta_gradient = false);

// Traces (first seed), occupancy over steps (mean over seeds), pooled dwells, exit statistics.
// Returns false when the run has none of them.
bool feedEscape(EscapePanel& panel, const RunFolderData& run);

// Final test loss over seeds per method (methods with ≥ 2 seeds). Returns the series drawn.
int feedFinalLossHistogram(HistogramPanel& panel, const RunFolderData& run);

}  // namespace liftlab
