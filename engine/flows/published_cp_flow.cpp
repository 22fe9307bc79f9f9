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
    require_cpflow(o.blocks() >= 1, "blocks must be >= 1, got " + std::to_string(o.blocks()));
    const MethodInfo* strategy = find_method(o.strategy());
    std::string offered;
    for (const auto& m : method_registry())
        if (m.published_cpflow) offered += (offered.empty() ? "" : ", ") + m.name;
    require_cpflow(strategy && strategy->published_cpflow,
                   "strategy '" + o.strategy() + "' is not one of: " + offered);
    positivity_ = strategy->positivity;
    const bool several = o.blocks() > 1;
    prior_log_var_ = std::isnan(o.prior_log_var()) ? (several ? 0.0 : 2.0) : o.prior_log_var();
    const int64_t d = o.dim(), h = o.hidden(), half = h / 2, hidden_layers = o.depth() - 1;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed());
    const bool lifter = positivity_ == PositivityMap::Lifted;

    flow_an_b_.push_back(register_parameter("actnorm_b", torch::zeros({d}, f64())));
    flow_an_logs_.push_back(register_parameter("actnorm_logs", torch::zeros({d}, f64())));
    blocks_.resize(static_cast<size_t>(o.blocks()));
    for (size_t k = 0; k < blocks_.size(); ++k) {
        Block& blk = blocks_[k];
        // Block 0 keeps the one-block names; the others are prefixed "blk<k>_".
        const std::string pre = k == 0 ? "" : "blk" + std::to_string(k) + "_";
        blk.w0 =
            register_parameter(pre + "w0", torch::full({1}, std::log(std::exp(1.0) - 1.0), f64()),
                               /*requires_grad=*/!several);
        blk.w1 = register_parameter(pre + "w1", torch::zeros({1}, f64()));
        blk.W0 = register_parameter(pre + "W0", uniform(gen, {h, d}, d));
        blk.b0 = register_parameter(pre + "b0", uniform(gen, {h}, d));
        for (int64_t l = 0; l <= hidden_layers; ++l) {
            const bool last = l == hidden_layers;
            const int64_t out = last ? 1 : half;
            const std::string s = pre + std::to_string(l);
            // Draw order per layer: W̃, its bias, Wx (+ bias), Wx2 (+ bias), shared by all three.
            auto raw = uniform(gen, {out, h}, h);
            if (positivity_ == PositivityMap::Projected) raw = torch::softplus(raw);
            blk.raw.push_back(register_parameter("raw" + s, raw, /*requires_grad=*/!lifter));
            if (!last) {
                blk.bz.push_back(register_parameter("bz" + s, uniform(gen, {out}, h)));
                blk.wx.push_back(register_parameter("wx" + s, uniform(gen, {out, d}, d)));
                blk.cx.push_back(register_parameter("cx" + s, uniform(gen, {out}, d)));
                blk.wx2.push_back(register_parameter("wx2_" + s, uniform(gen, {half, d}, d)));
                blk.cx2.push_back(register_parameter("cx2_" + s, uniform(gen, {half}, d)));
            } else {
                blk.wx.push_back(register_parameter("wx" + s, uniform(gen, {out, d}, d)));
            }
            blk.an_b.push_back(register_parameter("an_b" + s, torch::zeros({out}, f64()),
                                                  /*requires_grad=*/!last));
            blk.an_logs.push_back(register_parameter("an_logs" + s, torch::zeros({out}, f64())));
        }
    }
    if (lifter) {
        for (size_t k = 0; k < blocks_.size(); ++k) {
            Block& blk = blocks_[k];
            const std::string pre = k == 0 ? "" : "blk" + std::to_string(k) + "_";
            const std::vector<int64_t> sizes = {d, kCpBodyHidden, kCpBodyHidden, kBodyOut};
            for (size_t i = 0; i + 1 < sizes.size(); ++i) {
                blk.body_w.push_back(
                    register_parameter(pre + "body_w" + std::to_string(i),
                                       uniform(gen, {sizes[i + 1], sizes[i]}, sizes[i])));
                blk.body_b.push_back(register_parameter(pre + "body_b" + std::to_string(i),
                                                        uniform(gen, {sizes[i + 1]}, sizes[i])));
            }
            for (size_t l = 0; l < blk.raw.size(); ++l) {
                const int64_t numel = blk.raw[l].numel();
                blk.readout_w.push_back(register_parameter(
                    pre + "readout_w" + std::to_string(l),
                    o.readout_fanin_scale() ? torch::randn({numel, kBodyOut}, gen, f64())
                                            : uniform(gen, {numel, kBodyOut}, kBodyOut)));
                blk.readout_b.push_back(
                    register_parameter(pre + "readout_b" + std::to_string(l),
                                       torch::full({numel}, kReadoutBias, f64())));
            }
        }
    }
    // Recipe B: an ActNorm after every block (blocks + 1 in all).
    for (size_t k = 1; several && k <= blocks_.size(); ++k) {
        const std::string pre = "actnorm" + std::to_string(k);
        flow_an_b_.push_back(register_parameter(pre + "_b", torch::zeros({d}, f64())));
        flow_an_logs_.push_back(register_parameter(pre + "_logs", torch::zeros({d}, f64())));
    }
}

torch::Tensor PublishedCpFlowImpl::act(const torch::Tensor& u) const {
    return gaussian_softplus(u) - 1.0 / std::sqrt(2 * kPi);  // g(0) = 1/(2k) = 1/√(2π)
}

torch::Tensor PublishedCpFlowImpl::symmetric_act(const torch::Tensor& u) const {
    return act(u) - 0.5 * u;
}

torch::Tensor PublishedCpFlowImpl::actnorm(const Block& blk, size_t l,
                                           const torch::Tensor& u) const {
    return (u + blk.an_b[l]) * (torch::exp(blk.an_logs[l]) + kScalingMin);
}

torch::Tensor PublishedCpFlowImpl::flow_actnorm(size_t k, const torch::Tensor& x) const {
    return (x + flow_an_b_[k]) * (torch::exp(flow_an_logs_[k]) + kScalingMin);
}

torch::Tensor PublishedCpFlowImpl::flow_actnorm_log_s(size_t k) const {
    return torch::log(torch::exp(flow_an_logs_[k]) + kScalingMin).sum();
}

namespace {
// ActNorm data init on u (n × k): b = −mean, logs = −log(sd + 1e-6) (population sd about the mean).
void init_actnorm(const torch::Tensor& u, const torch::Tensor& b, const torch::Tensor& logs) {
    torch::NoGradGuard no_grad;
    const auto mean = u.detach().mean(0);
    const auto sd = (u.detach() - mean).pow(2).mean(0).sqrt();
    b.copy_(-mean);
    logs.copy_(-torch::log(sd + kActNormEps));
}
}  // namespace

torch::Tensor PublishedCpFlowImpl::potential(const Block& blk, const torch::Tensor& y,
                                             const std::vector<torch::Tensor>& raw,
                                             bool init_actnorms) {
    const bool projected = positivity_ == PositivityMap::Projected;
    const double gain = 1.0 / static_cast<double>(options_.hidden());  // PosLinear's 1/fan_in
    auto z = symmetric_act(torch::addmm(blk.b0, y, blk.W0.t()));
    const size_t hidden_layers = raw.size() - 1;
    for (size_t l = 0; l < hidden_layers; ++l) {
        const auto w = projected ? raw[l] : torch::softplus(raw[l]);
        auto u =
            (torch::addmm(blk.bz[l], z, w.t())) * gain + torch::addmm(blk.cx[l], y, blk.wx[l].t());
        if (init_actnorms) init_actnorm(u, blk.an_b[l], blk.an_logs[l]);
        const auto inner = act(actnorm(blk, l, u));
        const auto aug = symmetric_act(torch::addmm(blk.cx2[l], y, blk.wx2[l].t()));
        z = torch::cat({inner, aug}, 1);
    }
    const auto w = projected ? raw.back() : torch::softplus(raw.back());
    const auto u = z.matmul(w.t()) * gain + y.matmul(blk.wx.back().t());
    if (init_actnorms) init_actnorm(u, blk.an_b.back(), blk.an_logs.back());
    const auto icnn = actnorm(blk, hidden_layers, u).squeeze(1);
    return torch::softplus(blk.w1) * icnn + torch::softplus(blk.w0) * y.pow(2).sum(1) / 2;
}

std::vector<torch::Tensor> PublishedCpFlowImpl::block_raw(size_t k, const torch::Tensor& y) const {
    const Block& blk = blocks_[k];
    if (positivity_ != PositivityMap::Lifted) return blk.raw;
    // The body reads the batch as it enters the convex block, detached (constants in x).
    auto hcur = y.detach();
    for (size_t i = 0; i < blk.body_w.size(); ++i)
        hcur = torch::relu(torch::addmm(blk.body_b[i], hcur, blk.body_w[i].t()));
    auto pooled = hcur.mean(0);
    // Standardised over its 96 entries by the engine lifter's own pool_norm (until 2026-12-02 this
    // used the population variance with ε inside the square root: a 0.5 % larger scale).
    pooled = pool_norm(pooled);
    // The reference's readout_fanin_scale divides Θ_E h by d_h (its weights start at N(0, 1)).
    const double scale = options_.readout_fanin_scale() ? 1.0 / static_cast<double>(kBodyOut) : 1.0;
    std::vector<torch::Tensor> out;
    for (size_t l = 0; l < blk.raw.size(); ++l) {
        auto theta_h = torch::mv(blk.readout_w[l], pooled);
        if (scale != 1.0) theta_h = theta_h * scale;
        out.push_back((theta_h + blk.readout_b[l]).reshape(blk.raw[l].sizes()));
    }
    return out;
}

std::vector<torch::Tensor> PublishedCpFlowImpl::constrained(const torch::Tensor& cond) const {
    std::vector<torch::Tensor> out;
    if (positivity_ != PositivityMap::Lifted) {
        for (const auto& blk : blocks_) out.insert(out.end(), blk.raw.begin(), blk.raw.end());
        return out;
    }
    const auto c = cond.to(torch::kFloat64);
    std::vector<torch::Tensor> inputs;
    if (blocks_.size() == 1) {
        inputs.push_back(flow_actnorm(0, c));
    } else {
        // Each block's input on cond: one pass of the stack, without a graph (the emission reads
        // its input detached).
        torch::NoGradGuard no_grad;
        run_stack(
            c, {},
            [&](const Block& blk, const torch::Tensor& y, const std::vector<torch::Tensor>& raw) {
                return jet_map_of(blk, y, raw);
            },
            &inputs);
    }
    for (size_t k = 0; k < blocks_.size(); ++k) {
        const auto raw = block_raw(k, inputs[k]);
        out.insert(out.end(), raw.begin(), raw.end());
    }
    return out;
}

void PublishedCpFlowImpl::initialise(const torch::Tensor& x) {
    if (initialised_) return;
    const auto xd = x.to(torch::kFloat64).detach();
    init_actnorm(xd, flow_an_b_[0], flow_an_logs_[0]);
    torch::NoGradGuard no_grad;
    auto y = flow_actnorm(0, xd);
    for (size_t k = 0; k < blocks_.size(); ++k) {
        const auto raw = block_raw(k, y);
        potential(blocks_[k], y, raw, /*init_actnorms=*/true);
        if (flow_an_b_.size() == 1) break;
        // The next ActNorm from this block's output.
        const auto f = jet_map_of(blocks_[k], y, raw).f;
        init_actnorm(f, flow_an_b_[k + 1], flow_an_logs_[k + 1]);
        y = flow_actnorm(k + 1, f);
    }
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

torch::Tensor PublishedCpFlowImpl::potential_jet(const Block& blk, const torch::Tensor& y,
                                                 const std::vector<torch::Tensor>& raw) const {
    const bool projected = positivity_ == PositivityMap::Projected;
    const double gain = 1.0 / static_cast<double>(options_.hidden());
    const auto actnorm_jet = [&](size_t l, const torch::Tensor& J) {
        return (J + value_only(blk.an_b[l])) * (torch::exp(blk.an_logs[l]) + kScalingMin);
    };
    auto z = jet_act(input_affine(y, blk.W0, blk.b0), /*symmetric=*/true);
    const size_t hidden_layers = raw.size() - 1;
    for (size_t l = 0; l < hidden_layers; ++l) {
        const auto w = projected ? raw[l] : torch::softplus(raw[l]);
        const auto u = jet_linear(z, w, blk.bz[l]) * gain + input_affine(y, blk.wx[l], blk.cx[l]);
        const auto inner = jet_act(actnorm_jet(l, u), false);
        const auto aug = jet_act(input_affine(y, blk.wx2[l], blk.cx2[l]), true);
        z = torch::cat({inner, aug}, 2);
    }
    const auto w = projected ? raw.back() : torch::softplus(raw.back());
    const auto u = jet_linear(z, w) * gain + input_affine(y, blk.wx.back());
    const auto icnn = actnorm_jet(hidden_layers, u).squeeze(2);
    // ‖y‖²/2: value, ∂ₐ = yₐ, Hessian the identity.
    const int64_t n = y.size(0);
    const auto ones = torch::ones({1, n}, y.options()), zeros = torch::zeros({1, n}, y.options());
    const auto quadratic =
        torch::cat({(y.pow(2).sum(1) / 2).unsqueeze(0), y.t(), ones, zeros, ones}, 0);
    return torch::softplus(blk.w1) * icnn + torch::softplus(blk.w0) * quadratic;
}

PublishedCpFlowImpl::BlockMap PublishedCpFlowImpl::jet_map_of(
    const Block& blk, const torch::Tensor& y, const std::vector<torch::Tensor>& raw) const {
    const auto jet = potential_jet(blk, y, raw);
    return {jet.narrow(0, 1, 2).t(), jet[3] * jet[5] - jet[4].pow(2)};
}

PublishedCpFlowImpl::BlockMap PublishedCpFlowImpl::autograd_map_of(
    const Block& blk, const torch::Tensor& y_in, const std::vector<torch::Tensor>& raw,
    bool create_graph) const {
    // Derivatives are taken with respect to the block input y itself (an interior node when
    // anything before it is trainable), so the loss still reaches those parameters through f.
    auto y = y_in;
    if (!y.requires_grad()) y = y.detach().requires_grad_(true);
    auto* self = const_cast<PublishedCpFlowImpl*>(this);
    const auto F = self->potential(blk, y, raw, /*init_actnorms=*/false);
    const auto f = torch::autograd::grad({F.sum()}, {y}, {}, /*retain_graph=*/true,
                                         /*create_graph=*/true)[0];
    const auto r0 = torch::autograd::grad({f.select(1, 0).sum()}, {y}, {}, /*retain_graph=*/true,
                                          /*create_graph=*/create_graph)[0];
    const auto r1 = torch::autograd::grad({f.select(1, 1).sum()}, {y}, {}, /*retain_graph=*/true,
                                          /*create_graph=*/create_graph)[0];
    return {f, r0.select(1, 0) * r1.select(1, 1) - r0.select(1, 1) * r1.select(1, 0)};
}

template <class Map>
CpFlowLogProb PublishedCpFlowImpl::run_stack(const torch::Tensor& x,
                                             const std::vector<torch::Tensor>& raw, Map&& map,
                                             std::vector<torch::Tensor>* inputs) const {
    const size_t per_block = blocks_.front().raw.size();
    require_cpflow(raw.empty() || raw.size() == per_block * blocks_.size(),
                   "log_prob needs " + std::to_string(per_block * blocks_.size()) +
                       " constrained tensors (constrained()'s), got " + std::to_string(raw.size()));
    CpFlowLogProb out;
    auto y = flow_actnorm(0, x);
    torch::Tensor log_det;  // Σ log det ∇²F_k, per row
    auto log_s = flow_actnorm_log_s(0);
    for (size_t k = 0; k < blocks_.size(); ++k) {
        if (inputs) inputs->push_back(y.detach());
        const auto block_w =
            raw.empty()
                ? block_raw(k, y)
                : std::vector<torch::Tensor>(raw.begin() + static_cast<long>(k * per_block),
                                             raw.begin() + static_cast<long>((k + 1) * per_block));
        const BlockMap m = map(blocks_[k], y, block_w);
        out.nonpositive_dets += (m.det.detach() <= 0).sum().item<int64_t>();
        const auto block_log_det = torch::log(m.det.clamp_min(kDetFloor));
        log_det = log_det.defined() ? log_det + block_log_det : block_log_det;
        y = m.f;
        if (k + 1 < flow_an_b_.size()) {
            y = flow_actnorm(k + 1, y);
            log_s = log_s + flow_actnorm_log_s(k + 1);
        }
    }
    if (inputs) inputs->push_back(y.detach());
    const double plogv = prior_log_var_;
    const auto log_prior =
        (-y.pow(2) / (2 * std::exp(plogv) + kPriorEps) - plogv / 2 - 0.5 * std::log(2 * kPi))
            .sum(1);
    out.log_p = log_prior + log_det + log_s;
    return out;
}

CpFlowLogProb PublishedCpFlowImpl::log_prob(const torch::Tensor& x,
                                            const std::vector<torch::Tensor>& raw,
                                            bool create_graph) const {
    require_cpflow(initialised_,
                   "log_prob before initialise() (the ActNorms need their data init)");
    require_cpflow(x.dim() == 2 && x.size(1) == 2, "log_prob needs an n × 2 tensor");
    torch::AutoGradMode mode(create_graph);
    // The jets are derivatives in each block's input y; y itself carries the graph to
    // everything before it.
    return run_stack(x.to(torch::kFloat64), raw,
                     [&](const Block& blk, const torch::Tensor& y,
                         const std::vector<torch::Tensor>& w) { return jet_map_of(blk, y, w); });
}

CpFlowLogProb PublishedCpFlowImpl::log_prob_by_autograd(const torch::Tensor& x,
                                                        const std::vector<torch::Tensor>& raw,
                                                        bool create_graph) const {
    require_cpflow(initialised_,
                   "log_prob before initialise() (the ActNorms need their data init)");
    require_cpflow(x.dim() == 2 && x.size(1) == 2, "log_prob needs an n × 2 tensor");
    torch::AutoGradMode enable(true);
    return run_stack(
        x.to(torch::kFloat64), raw,
        [&](const Block& blk, const torch::Tensor& y, const std::vector<torch::Tensor>& w) {
            return autograd_map_of(blk, y, w, create_graph);
        });
}

std::vector<torch::Tensor> PublishedCpFlowImpl::block_inputs(const torch::Tensor& x) const {
    require_cpflow(initialised_,
                   "block_inputs before initialise() (the ActNorms need their data init)");
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> out;
    run_stack(
        x.to(torch::kFloat64), {},
        [&](const Block& blk, const torch::Tensor& y, const std::vector<torch::Tensor>& w) {
            return jet_map_of(blk, y, w);
        },
        &out);
    return out;
}

void PublishedCpFlowImpl::project() {
    if (positivity_ != PositivityMap::Projected) return;
    torch::NoGradGuard no_grad;
    for (auto& blk : blocks_)
        for (auto& r : blk.raw) r.clamp_min_(0.0);
}

std::vector<torch::Tensor> PublishedCpFlowImpl::trainable_parameters() const {
    std::vector<torch::Tensor> out;
    for (const auto& p : parameters())
        if (p.requires_grad()) out.push_back(p);
    return out;
}

}  // namespace liftlab
