// Readout-shoulder statistics (docs/methods.md §4.2). With θ = softplus(θ̃) an update
// of θ̃ reaches θ attenuated by softplus′(θ̃) = sigmoid(θ̃); a weight is "in the shoulder" when that
// factor is ≤ 0.05 (attenuation ≥ 20×), i.e. θ̃ ≤ log(0.05/0.95) ≈ −2.944, θ ≤ −log 0.95 ≈ 0.0513.
// For pgd (θ free, projected onto θ ≥ 0 after each step) it is θ == 0 exactly.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace liftlab {

class StateArchive;

constexpr double kShoulderSigmoid = 0.05;  // in the shoulder when sigmoid(θ̃) ≤ 0.05

// Boolean mask (1-D, numel entries) of the coordinates in the shoulder. projected = false
// (softplus-readout strategies): sigmoid(θ̃) ≤ 0.05, evaluated as θ̃ ≤ log(0.05/0.95) in float64 so
// the threshold is exact; projected = true (pgd, input θ): θ == 0 exactly (−0 included). Any
// shape (flattened), any floating dtype; NaN is never in the shoulder.
torch::Tensor shoulder_mask(const torch::Tensor& pre_readout, bool projected);

// Entry/exit bookkeeping of P coordinates observed over training. O(P) per observation with plain
// arrays; completed dwells are appended to a vector (one int64 per exit).
class ShoulderTracker {
public:
    explicit ShoulderTracker(int64_t coordinates);  // throws std::invalid_argument if < 1

    // Observation at `step` (strictly increasing; observations may be every k steps). in_shoulder:
    // bool tensor with P entries (any shape). Throws std::invalid_argument otherwise.
    void observe(int step, const torch::Tensor& in_shoulder);

    // Fraction of coordinates in the shoulder at the last observation (NaN before the first).
    double occupancy() const;
    // Observed events so far: an entry is out at one observation and in at the next, an exit the
    // reverse. Coordinates already in at the first observation are not entries (see
    // censored_start).
    int64_t entries() const { return entries_; }
    int64_t exits() const { return exits_; }
    // Completed dwell lengths in steps (step of the exit observation − step of the entry
    // observation), in the order observed. Left-censored dwells (in at the first observation) are
    // not listed even when they end (only a lower bound of their length is known); their exits do
    // count in exits() and their time in exposure(). Dwells still running are not listed either.
    const std::vector<int64_t>& completed_dwells() const { return dwells_; }
    // Coordinates in the shoulder at the first observation (left-censored dwells).
    int64_t censored_start() const { return censored_start_; }
    // Dwells still running at the last observation (right-censored) = coordinates in the shoulder.
    // Always censored() == censored_start() + entries() − exits().
    int64_t censored() const { return in_count_; }
    // Median of completed_dwells (mean of the two middle values for an even count; NaN if none).
    double median_dwell() const;
    // Coordinate-steps spent in the shoulder: Σ over observation intervals of (coordinates in at
    // the start of the interval) × (interval length).
    int64_t exposure() const { return exposure_; }
    // exits / exposure: exits per coordinate-step in the shoulder (NaN when exposure is 0). With
    // observations every step it is the maximum-likelihood per-step exit probability of a
    // memoryless coordinate; with spacing k > 1, exits followed by re-entry within k steps are
    // missed.
    double exit_rate() const;
    int64_t observations() const { return observations_; }
    // Everything observed so far (run --resume).
    void save_state(StateArchive& a, const std::string& prefix) const;
    void load_state(const StateArchive& a, const std::string& prefix);
    int64_t coordinates() const { return static_cast<int64_t>(in_.size()); }

private:
    std::vector<uint8_t> in_;         // in the shoulder at the last observation
    std::vector<uint8_t> left_cens_;  // current dwell began at the first observation
    std::vector<int> entry_step_;     // step of the current dwell's entry observation
    std::vector<int64_t> dwells_;
    int64_t entries_ = 0, exits_ = 0, censored_start_ = 0, in_count_ = 0, exposure_ = 0;
    int64_t observations_ = 0;
    int last_step_ = 0;
};

}  // namespace liftlab
