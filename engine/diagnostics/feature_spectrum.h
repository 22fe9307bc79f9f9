// Singular-value spectrum of a feature matrix (docs/methods.md §2.1).
#pragma once
#include <torch/torch.h>

#include <vector>

namespace liftlab {

struct SpectrumSummary {
    std::vector<double> singular_values;  // descending
    double kappa = 0;           // σ_max / σ_min over the numerically non-zero singular values
    double effective_rank = 0;  // exp(entropy of σ_i / Σσ) (Roy & Vetterli 2007)
    int numerical_rank = 0;     // σ_i > σ_max · max(N, d) · ε
};

// features: N × d (any float dtype; computed in float64).
SpectrumSummary feature_spectrum(const torch::Tensor& features);

}  // namespace liftlab
