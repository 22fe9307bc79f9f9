// Singular-value spectrum of a feature matrix (docs/methods.md §2.1).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace liftlab {

struct SpectrumSummary {
    std::vector<double> singular_values;  // descending, min(N, d) of them
    double kappa = 0;           // σ_max / σ_min over the numerically non-zero singular values
    double effective_rank = 0;  // exp(entropy of σ_i / Σσ) (Roy & Vetterli 2007)
    // σ_i > tol: σ_max · max(N, d) · ε from the SVD, σ_max · √(max(N, d) · ε) from the Gram
    int numerical_rank = 0;
};

// The singular values come from the SVD of the features themselves when the work
// N · d · min(N, d) is small (at most kSmallSvdWork), or when they are not wide (d ≤ 2N) and the
// work is at most kDirectSvdWork (≈ 0.3 s on one core).
// Otherwise — wide features (d ≫ N: LAPACK's SVD of 64 × 200 000 takes 7 s, of 1024 × 200 000
// over 15 min) or a large matrix — they come from the eigenvalues of the min(N, d)-square Gram
// matrix (ΦΦᵀ when d > N, ΦᵀΦ otherwise: the same non-zero singular values, squared),
// accumulated in float64 over blocks of the long side, so that the cost is
// O(min(N, d)² · max(N, d)) and a stop is seen between blocks. The Gram squares the condition
// number: its singular values below σ_max · √(max(N, d) · ε) are noise and count as zero.
constexpr double kDirectSvdWork = 1073741824.0;  // 2³⁰: a 1024 × 1024 SVD
constexpr double kSmallSvdWork = 16777216.0;     // 2²⁴: milliseconds whatever the shape
enum class SpectrumRoute { Auto, Svd, Gram };
// Elements of Φ per Gram block (≈ 0.1–0.5 s of work on one core at min(N, d) ≤ 2048).
constexpr int64_t kGramBlockElements = int64_t{1} << 22;

// features: N × d (any float dtype; computed in float64). `stop` is asked between Gram blocks;
// true throws Stopped (core/activity.h). `route`: Auto as above; Svd or Gram (tests).
SpectrumSummary feature_spectrum(const torch::Tensor& features,
                                 const std::function<bool()>& stop = {},
                                 SpectrumRoute route = SpectrumRoute::Auto);

// The spectrum diagnostic's row budget: when the probe rows and the features are both wider than
// this, only the first kSpectrumRowBudget rows enter the spectrum, so that its Gram is at most
// 2048 × 2048 (its eigendecomposition, the one step a stop cannot break, ≈ 1 s).
constexpr int64_t kSpectrumRowBudget = 2048;
torch::Tensor spectrum_rows(const torch::Tensor& features);

}  // namespace liftlab
