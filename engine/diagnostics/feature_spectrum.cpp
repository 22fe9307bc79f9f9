#include "diagnostics/feature_spectrum.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/activity.h"

namespace liftlab {

namespace {

// The singular values (descending) from the Gram matrix of `f` on its short side.
std::vector<double> gram_singular_values(const torch::Tensor& f,
                                         const std::function<bool()>& stop) {
    const bool wide = f.size(1) >= f.size(0);
    const int64_t side = std::min(f.size(0), f.size(1));
    const int64_t length = std::max(f.size(0), f.size(1));
    const int64_t block = std::max<int64_t>(1, kGramBlockElements / std::max<int64_t>(side, 1));
    auto gram = torch::zeros({side, side}, f.options().dtype(torch::kFloat64));
    for (int64_t start = 0; start < length; start += block) {
        if (stop && stop()) throw Stopped();
        const int64_t len = std::min(block, length - start);
        const auto part = (wide ? f.narrow(1, start, len) : f.narrow(0, start, len).t())
                              .to(torch::kFloat64);  // side × len
        gram.addmm_(part, part.t());
    }
    if (stop && stop()) throw Stopped();
    const auto lambda = torch::linalg_eigvalsh(gram).cpu().contiguous();  // ascending
    std::vector<double> sv(static_cast<size_t>(side));
    const double* l = lambda.data_ptr<double>();
    for (int64_t i = 0; i < side; ++i)
        sv[static_cast<size_t>(i)] = std::sqrt(std::max(0.0, l[side - 1 - i]));
    return sv;
}

}  // namespace

SpectrumSummary feature_spectrum(const torch::Tensor& features, const std::function<bool()>& stop,
                                 SpectrumRoute route) {
    torch::NoGradGuard no_grad;
    SpectrumSummary s;
    const int64_t n = features.size(0), d = features.dim() > 1 ? features.size(1) : 1;
    const double work =
        static_cast<double>(n) * static_cast<double>(d) * static_cast<double>(std::min(n, d));
    const double eps = std::numeric_limits<double>::epsilon();
    const double size = static_cast<double>(std::max(n, d));
    double tol_factor;
    const bool direct = route == SpectrumRoute::Svd ||
                        (route == SpectrumRoute::Auto &&
                         (work <= kSmallSvdWork || (d <= 2 * n && work <= kDirectSvdWork)));
    if (direct) {
        const auto sv = torch::linalg_svdvals(features.to(torch::kFloat64)).cpu().contiguous();
        s.singular_values.assign(sv.data_ptr<double>(), sv.data_ptr<double>() + sv.numel());
        tol_factor = size * eps;
    } else {
        s.singular_values = gram_singular_values(features.reshape({n, d}), stop);
        tol_factor = std::sqrt(size * eps);
    }
    if (s.singular_values.empty() || s.singular_values[0] <= 0) return s;
    const double smax = s.singular_values[0];
    const double tol = smax * tol_factor;
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

torch::Tensor spectrum_rows(const torch::Tensor& features) {
    if (features.dim() < 2 || features.size(0) <= kSpectrumRowBudget ||
        features.size(-1) <= kSpectrumRowBudget)
        return features;
    return features.narrow(0, 0, kSpectrumRowBudget);
}

}  // namespace liftlab
