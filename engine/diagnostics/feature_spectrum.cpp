#include "diagnostics/feature_spectrum.h"

#include <cmath>
#include <limits>

namespace liftlab {

SpectrumSummary feature_spectrum(const torch::Tensor& features) {
    torch::NoGradGuard no_grad;
    const auto f = features.to(torch::kFloat64);
    const auto sv = torch::linalg_svdvals(f).cpu().contiguous();
    SpectrumSummary s;
    s.singular_values.assign(sv.data_ptr<double>(), sv.data_ptr<double>() + sv.numel());
    if (s.singular_values.empty() || s.singular_values[0] <= 0) return s;
    const double smax = s.singular_values[0];
    const double tol = smax * static_cast<double>(std::max(f.size(0), f.size(1))) *
                       std::numeric_limits<double>::epsilon();
    double smin = smax, total = 0;
    for (double v : s.singular_values)
        if (v > tol) {
            ++s.numerical_rank;
            smin = v;
            total += v;
        }
    s.kappa = smax / smin;
    double entropy = 0;
    for (double v : s.singular_values)
        if (v > tol) {
            const double p = v / total;
            entropy -= p * std::log(p);
        }
    s.effective_rank = std::exp(entropy);
    return s;
}

}  // namespace liftlab
