// A weight's gradient kept in factored form, Σ_k g_k h_kᵀ, instead of as a dense tensor (issue
// 12). The lifter's readouts are matrix–vector products W h of one pooled code h, so ∂ℓ/∂W is an
// outer product g hᵀ of two short vectors: forming it (3.2 M floats for the reference lifter),
// reading it again for the gradient norm and once more in Adam cost a third of the lifter's step
// in memory traffic. With the factors kept, FusedAdam forms each g_i h_j in its one pass over
// (W, m, v), and the norm is exact from the factors: ‖Σ g_k h_kᵀ‖²_F = Σ_kl (g_k·g_l)(h_k·h_l).
#pragma once
#include <torch/torch.h>

#include <utility>
#include <vector>

namespace liftlab {

struct OuterProductGradient {
    // (g_k, h_k): g_k has one entry per row of the weight, h_k one per column (contiguous, the
    // weight's dtype). Each backward through the weight appends one term.
    std::vector<std::pair<torch::Tensor, torch::Tensor>> terms;

    bool empty() const { return terms.empty(); }
    void clear() { terms.clear(); }
    // Σ_k g_k h_kᵀ as a dense rows × cols tensor (tests and diagnostics).
    torch::Tensor dense() const {
        torch::Tensor out;
        for (const auto& [g, h] : terms) {
            auto t = torch::outer(g, h);
            out = out.defined() ? out + t : t;
        }
        return out;
    }
    // ‖Σ_k g_k h_kᵀ‖²_F from the factors, in float64.
    double squared_norm() const {
        double sq = 0;
        for (size_t k = 0; k < terms.size(); ++k)
            for (size_t l = 0; l < terms.size(); ++l)
                sq += terms[k]
                          .first.to(torch::kFloat64)
                          .dot(terms[l].first.to(torch::kFloat64))
                          .item<double>() *
                      terms[k]
                          .second.to(torch::kFloat64)
                          .dot(terms[l].second.to(torch::kFloat64))
                          .item<double>();
        return sq;
    }
};

// A weight whose gradient arrives factored, and where its factors are collected.
struct FactoredWeight {
    torch::Tensor weight;  // rows × cols
    std::shared_ptr<OuterProductGradient> gradient;
};

}  // namespace liftlab
