#include "flows/published_cp_flow.h"

#include "core/numeric.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <stdexcept>

#include "icnn/positivity.h"

namespace liftlab {

namespace {

constexpr double kScalingMin = 0.001;  // ActNorm: s = exp(logs) + 0.001 (upstream _scaling_min)
constexpr double kActNormEps = 1e-6;   // ActNorm init: logs = −log(sd + 1e-6)
constexpr double kPriorEps = 1e-5;     // upstream log_normal's denominator term
constexpr double kDetFloor = 1e-300;   // clamp of a (never expected) non-positive determinant
constexpr int64_t kCpBodyHidden = 64;  // lifter body d → 64 → 64 → 96
constexpr int64_t kBodyOut = 96;
constexpr double kReadoutBias = 0.0;  // published config: readout_bias_init 0

void require_cpflow(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("published cp-flow: " + what);
}

// PyTorch's Linear default: weight and bias U(±1/√fan_in).
torch::Tensor uniform(at::Generator& gen, std::vector<int64_t> shape, int64_t fan_in) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    return torch::rand(shape, gen, f64()) * (2 * bound) - bound;
}

// Upstream gaussian_softplus: (k u erf(u/√2) + exp(−u²/2) + k u) / (2k), k = √(π/2).
torch::Tensor gaussian_softplus(const torch::Tensor& u) {
    const double k = std::sqrt(kPi / 2);
    return (k * u * torch::erf(u / std::sqrt(2.0)) + torch::exp(-u.pow(2) / 2) + k * u) / (2 * k);
}

}  // namespace

PublishedCpFlowImpl::PublishedCpFlowImpl(const PublishedCpFlowOptions& options)
    : options_(options) {
    const auto& o = options_;
    require_cpflow(o.dim() == 2,
                   "dim must be 2 (the exact 2×2 Hessian log-det), got " + std::to_string(o.dim()));
    require_cpflow(o.hidden() >= 2 && o.hidden() % 2 == 0,
                   "hidden must be even and >= 2 (half the units are the augmented branch)");
    require_cpflow(o.depth() >= 2, "depth must be >= 2, got " + std::to_string(o.depth()));
    const MethodInfo* strategy = find_method(o.strategy());
    std::string offered;
    for (const auto& m : method_registry())
        if (m.published_cpflow) offered += (offered.empty() ? "" : ", ") + m.name;
    require_cpflow(strategy && strategy->published_cpflow,
                   "strategy '" + o.strategy() + "' is not one of: " + offered);
    positivity_ = strategy->positivity;
    const int64_t d = o.dim(), h = o.hidden(), half = h / 2, hidden_layers = o.depth() - 1;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed());
    const bool lifter = positivity_ == PositivityMap::Lifted;

    outer_b_ = register_parameter("actnorm_b", torch::zeros({d}, f64()));
    outer_logs_ = register_parameter("actnorm_logs", torch::zeros({d}, f64()));
    w0_ = register_parameter("w0", torch::full({1}, std::log(std::exp(1.0) - 1.0), f64()));
    w1_ = register_parameter("w1", torch::zeros({1}, f64()));
    W0_ = register_parameter("W0", uniform(gen, {h, d}, d));
    b0_ = register_parameter("b0", uniform(gen, {h}, d));
    for (int64_t l = 0; l <= hidden_layers; ++l) {
        const bool last = l == hidden_layers;
        const int64_t out = last ? 1 : half;
        const std::string s = std::to_string(l);
        // Draw order per layer: W̃, its bias, Wx (+ bias), Wx2 (+ bias), shared by all three.
        auto raw = uniform(gen, {out, h}, h);
        if (positivity_ == PositivityMap::Projected) raw = torch::softplus(raw);
        raw_.push_back(register_parameter("raw" + s, raw, /*requires_grad=*/!lifter));
        if (!last) {
            bz_.push_back(register_parameter("bz" + s, uniform(gen, {out}, h)));
            wx_.push_back(register_parameter("wx" + s, uniform(gen, {out, d}, d)));
            cx_.push_back(register_parameter("cx" + s, uniform(gen, {out}, d)));
            wx2_.push_back(register_parameter("wx2_" + s, uniform(gen, {half, d}, d)));
            cx2_.push_back(register_parameter("cx2_" + s, uniform(gen, {half}, d)));
        } else {
            wx_.push_back(register_parameter("wx" + s, uniform(gen, {out, d}, d)));
        }
        an_b_.push_back(register_parameter("an_b" + s, torch::zeros({out}, f64()),
                                           /*requires_grad=*/!last));
        an_logs_.push_back(register_parameter("an_logs" + s, torch::zeros({out}, f64())));
    }
    if (lifter) {
        const std::vector<int64_t> sizes = {d, kCpBodyHidden, kCpBodyHidden, kBodyOut};
        for (size_t i = 0; i + 1 < sizes.size(); ++i) {
            body_w_.push_back(register_parameter("body_w" + std::to_string(i),
                                                 uniform(gen, {sizes[i + 1], sizes[i]}, sizes[i])));
            body_b_.push_back(register_parameter("body_b" + std::to_string(i),
                                                 uniform(gen, {sizes[i + 1]}, sizes[i])));
        }
        for (size_t l = 0; l < raw_.size(); ++l) {
            const int64_t numel = raw_[l].numel();
            readout_w_.push_back(register_parameter(
                "readout_w" + std::to_string(l), options_.readout_fanin_scale()
                                                     ? torch::randn({numel, kBodyOut}, gen, f64())
                                                     : uniform(gen, {numel, kBodyOut}, kBodyOut)));
            readout_b_.push_back(register_parameter("readout_b" + std::to_string(l),
                                                    torch::full({numel}, kReadoutBias, f64())));
        }
    }
}

torch::Tensor PublishedCpFlowImpl::act(const torch::Tensor& u) const {
    return gaussian_softplus(u) - 1.0 / std::sqrt(2 * kPi);  // g(0) = 1/(2k) = 1/√(2π)
}

torch::Tensor PublishedCpFlowImpl::symmetric_act(const torch::Tensor& u) const {
    return act(u) - 0.5 * u;
}

torch::Tensor PublishedCpFlowImpl::actnorm(size_t l, const torch::Tensor& u) const {
    return (u + an_b_[l]) * (torch::exp(an_logs_[l]) + kScalingMin);
}

torch::Tensor PublishedCpFlowImpl::outer_actnorm(const torch::Tensor& x) const {
    return (x + outer_b_) * (torch::exp(outer_logs_) + kScalingMin);
}

namespace {
// ActNorm data init on u (n × k): b = −mean, logs = −log(sd + 1e-6) (population sd about the mean).
void init_actnorm(const torch::Tensor& u, torch::Tensor& b, torch::Tensor& logs) {
    torch::NoGradGuard no_grad;
    const auto mean = u.detach().mean(0);
    const auto sd = (u.detach() - mean).pow(2).mean(0).sqrt();
    b.copy_(-mean);
    logs.copy_(-torch::log(sd + kActNormEps));
}
}  // namespace

torch::Tensor PublishedCpFlowImpl::potential(const torch::Tensor& y,
                                             const std::vector<torch::Tensor>& raw,
                                             bool init_actnorms) {
    const bool projected = positivity_ == PositivityMap::Projected;
    const double gain = 1.0 / static_cast<double>(options_.hidden());  // PosLinear's 1/fan_in
    auto z = symmetric_act(torch::addmm(b0_, y, W0_.t()));
    const size_t hidden_layers = raw.size() - 1;
    for (size_t l = 0; l < hidden_layers; ++l) {
        const auto w = projected ? raw[l] : torch::softplus(raw[l]);
        auto u = (torch::addmm(bz_[l], z, w.t())) * gain + torch::addmm(cx_[l], y, wx_[l].t());
        if (init_actnorms) init_actnorm(u, an_b_[l], an_logs_[l]);
        const auto inner = act(actnorm(l, u));
        const auto aug = symmetric_act(torch::addmm(cx2_[l], y, wx2_[l].t()));
        z = torch::cat({inner, aug}, 1);
    }
    const auto w = projected ? raw.back() : torch::softplus(raw.back());
    const auto u = z.matmul(w.t()) * gain + y.matmul(wx_.back().t());
    if (init_actnorms) init_actnorm(u, an_b_.back(), an_logs_.back());
    const auto icnn = actnorm(hidden_layers, u).squeeze(1);
    return torch::softplus(w1_) * icnn + torch::softplus(w0_) * y.pow(2).sum(1) / 2;
}

std::vector<torch::Tensor> PublishedCpFlowImpl::constrained(const torch::Tensor& cond) const {
    if (positivity_ != PositivityMap::Lifted) return raw_;
    // The body reads the batch as it enters the convex block, detached (constants in x).
    auto hcur = outer_actnorm(cond.to(torch::kFloat64)).detach();
    for (size_t i = 0; i < body_w_.size(); ++i)
        hcur = torch::relu(torch::addmm(body_b_[i], hcur, body_w_[i].t()));
    auto pooled = hcur.mean(0);
    // Standardised over its 96 entries by the engine lifter's own pool_norm (until 2026-12-02 this
    // used the population variance with ε inside the square root: a 0.5 % larger scale).
    pooled = pool_norm(pooled);
    // The reference's readout_fanin_scale divides Θ_E h by d_h (its weights start at N(0, 1)).
    const double scale = options_.readout_fanin_scale() ? 1.0 / static_cast<double>(kBodyOut) : 1.0;
    std::vector<torch::Tensor> out;
    for (size_t l = 0; l < raw_.size(); ++l) {
        auto theta_h = torch::mv(readout_w_[l], pooled);
        if (scale != 1.0) theta_h = theta_h * scale;
        out.push_back((theta_h + readout_b_[l]).reshape(raw_[l].sizes()));
    }
    return out;
}

void PublishedCpFlowImpl::initialise(const torch::Tensor& x) {
    if (initialised_) return;
    const auto xd = x.to(torch::kFloat64).detach();
    init_actnorm(xd, outer_b_, outer_logs_);
    torch::NoGradGuard no_grad;
    const auto raw = constrained(xd);
    potential(outer_actnorm(xd), raw, /*init_actnorms=*/true);
    initialised_ = true;
}

namespace {

// A 2-jet in y ∈ R² of k functions on n rows: a 6 × n × k tensor holding the values, the first
// derivatives ∂₀, ∂₁ and the second ∂₀₀, ∂₀₁, ∂₁₁. Affine maps act on every slice (the bias on
// the value only); an elementwise σ follows the chain rule to second order.
constexpr int64_t kJet = 6;

// b (k) as a jet constant: the value slice, zeros below.
torch::Tensor value_only(const torch::Tensor& b) {
    return torch::constant_pad_nd(b.view({1, 1, -1}), {0, 0, 0, 0, 0, kJet - 1});
}

// J ↦ J Wᵀ (+ b): one product over the stacked 6n rows.
torch::Tensor jet_linear(const torch::Tensor& J, const torch::Tensor& W,
                         const torch::Tensor& b = {}) {
    auto out = J.reshape({-1, J.size(2)}).matmul(W.t()).view({kJet, J.size(1), W.size(0)});
    return b.defined() ? out + value_only(b) : out;
}

// The jet of y ↦ W y + b at y (∂ₐ = W's column a, no curvature).
torch::Tensor input_affine(const torch::Tensor& y, const torch::Tensor& W,
                           const torch::Tensor& b = {}) {
    const int64_t n = y.size(0), k = W.size(0);
    auto value = b.defined() ? torch::addmm(b, y, W.t()) : y.matmul(W.t());
    return torch::cat({value.unsqueeze(0), W.t().unsqueeze(1).expand({2, n, k}),
                       torch::zeros({3, n, k}, y.options())},
                      0);
}

// σ applied to a jet, given σ, σ′ and σ″ at its values.
torch::Tensor jet_map(const torch::Tensor& J, const torch::Tensor& s0, const torch::Tensor& s1,
                      const torch::Tensor& s2) {
    const auto a = J.select(0, 1), c = J.select(0, 2);
    const auto products = torch::stack({a * a, a * c, c * c});
    return torch::cat(
        {s0.unsqueeze(0), s1 * J.narrow(0, 1, 2), s1 * J.narrow(0, 3, 3) + s2 * products}, 0);
}

// The activations on jets: g(u) = u Φ(u) + φ(u) (the gaussian softplus), g′ = Φ, g″ = φ;
// σ = g − g(0) and the symmetric σ_s = σ − u/2.
torch::Tensor jet_act(const torch::Tensor& J, bool symmetric) {
    const auto u = J.select(0, 0);
    const auto pdf = torch::exp(-u.pow(2) / 2) / std::sqrt(2 * kPi);
    const auto cdf = 0.5 * torch::erfc(-u / std::sqrt(2.0));
    auto value = u * cdf + pdf - 1.0 / std::sqrt(2 * kPi);
    if (symmetric) return jet_map(J, value - 0.5 * u, cdf - 0.5, pdf);
    return jet_map(J, value, cdf, pdf);
}

}  // namespace

torch::Tensor PublishedCpFlowImpl::potential_jet(const torch::Tensor& y,
                                                 const std::vector<torch::Tensor>& raw) const {
    const bool projected = positivity_ == PositivityMap::Projected;
    const double gain = 1.0 / static_cast<double>(options_.hidden());
    const auto actnorm_jet = [&](size_t l, const torch::Tensor& J) {
        return (J + value_only(an_b_[l])) * (torch::exp(an_logs_[l]) + kScalingMin);
    };
    auto z = jet_act(input_affine(y, W0_, b0_), /*symmetric=*/true);
    const size_t hidden_layers = raw.size() - 1;
    for (size_t l = 0; l < hidden_layers; ++l) {
        const auto w = projected ? raw[l] : torch::softplus(raw[l]);
        const auto u = jet_linear(z, w, bz_[l]) * gain + input_affine(y, wx_[l], cx_[l]);
        const auto inner = jet_act(actnorm_jet(l, u), false);
        const auto aug = jet_act(input_affine(y, wx2_[l], cx2_[l]), true);
        z = torch::cat({inner, aug}, 2);
    }
    const auto w = projected ? raw.back() : torch::softplus(raw.back());
    const auto u = jet_linear(z, w) * gain + input_affine(y, wx_.back());
    const auto icnn = actnorm_jet(hidden_layers, u).squeeze(2);
    // ‖y‖²/2: value, ∂ₐ = yₐ, Hessian the identity.
    const int64_t n = y.size(0);
    const auto ones = torch::ones({1, n}, y.options()), zeros = torch::zeros({1, n}, y.options());
    const auto quadratic =
        torch::cat({(y.pow(2).sum(1) / 2).unsqueeze(0), y.t(), ones, zeros, ones}, 0);
    return torch::softplus(w1_) * icnn + torch::softplus(w0_) * quadratic;
}

CpFlowLogProb PublishedCpFlowImpl::log_prob_from(const torch::Tensor& f,
                                                 const torch::Tensor& det) const {
    CpFlowLogProb out;
    out.nonpositive_dets = (det.detach() <= 0).sum().item<int64_t>();
    const double plogv = options_.prior_log_var();
    const auto log_prior =
        (-f.pow(2) / (2 * std::exp(plogv) + kPriorEps) - plogv / 2 - 0.5 * std::log(2 * kPi))
            .sum(1);
    const auto log_s = torch::log(torch::exp(outer_logs_) + kScalingMin).sum();
    out.log_p = log_prior + torch::log(det.clamp_min(kDetFloor)) + log_s;
    return out;
}

CpFlowLogProb PublishedCpFlowImpl::log_prob(const torch::Tensor& x,
                                            const std::vector<torch::Tensor>& raw,
                                            bool create_graph) const {
    require_cpflow(initialised_,
                   "log_prob before initialise() (the ActNorms need their data init)");
    require_cpflow(x.dim() == 2 && x.size(1) == 2, "log_prob needs an n × 2 tensor");
    torch::AutoGradMode mode(create_graph);
    // The jets are derivatives in y = ActNorm(x); y itself carries the graph to the ActNorm.
    const auto jet = potential_jet(outer_actnorm(x.to(torch::kFloat64)), raw);
    const auto det = jet[3] * jet[5] - jet[4].pow(2);
    return log_prob_from(jet.narrow(0, 1, 2).t(), det);
}

CpFlowLogProb PublishedCpFlowImpl::log_prob_by_autograd(const torch::Tensor& x,
                                                        const std::vector<torch::Tensor>& raw,
                                                        bool create_graph) const {
    require_cpflow(initialised_,
                   "log_prob before initialise() (the ActNorms need their data init)");
    require_cpflow(x.dim() == 2 && x.size(1) == 2, "log_prob needs an n × 2 tensor");
    torch::AutoGradMode enable(true);
    // Derivatives are taken with respect to y = ActNorm(x) itself (an interior node when the
    // ActNorm is trainable), so the loss still reaches the ActNorm through f and log s.
    auto y = outer_actnorm(x.to(torch::kFloat64));
    if (!y.requires_grad()) y = y.detach().requires_grad_(true);
    auto* self = const_cast<PublishedCpFlowImpl*>(this);
    const auto F = self->potential(y, raw, /*init_actnorms=*/false);
    const auto f = torch::autograd::grad({F.sum()}, {y}, {}, /*retain_graph=*/true,
                                         /*create_graph=*/true)[0];
    const auto r0 = torch::autograd::grad({f.select(1, 0).sum()}, {y}, {}, /*retain_graph=*/true,
                                          /*create_graph=*/create_graph)[0];
    const auto r1 = torch::autograd::grad({f.select(1, 1).sum()}, {y}, {}, /*retain_graph=*/true,
                                          /*create_graph=*/create_graph)[0];
    const auto det = r0.select(1, 0) * r1.select(1, 1) - r0.select(1, 1) * r1.select(1, 0);
    return log_prob_from(f, det);
}

void PublishedCpFlowImpl::project() {
    if (positivity_ != PositivityMap::Projected) return;
    torch::NoGradGuard no_grad;
    for (auto& r : raw_) r.clamp_min_(0.0);
}

std::vector<torch::Tensor> PublishedCpFlowImpl::trainable_parameters() const {
    std::vector<torch::Tensor> out;
    for (const auto& p : parameters())
        if (p.requires_grad()) out.push_back(p);
    return out;
}

}  // namespace liftlab
