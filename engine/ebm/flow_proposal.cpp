#include "ebm/flow_proposal.h"

#include "core/activity.h"
#include "core/c_numbers.h"
#include "core/numeric.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "data/tensor_cache.h"
#include "ebm/importance.h"

namespace liftlab {

namespace {

// Bumped whenever the flow, its fit or its storage changes results, so old caches miss.
constexpr const char* kProposalCacheVersion = "flow-proposal-v1";
constexpr double kLastLayerStd = 0.01;  // coupling outputs start near 0: the flow starts affine
constexpr int64_t kNllChunk = 8192;     // rows per chunk in the final train-NLL pass

void require_proposal(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("flow proposal: " + what);
}

// U(±1/√fan_in) weights and biases (LibTorch's Linear default), from `gen`.
std::pair<torch::Tensor, torch::Tensor> default_linear(int64_t in, int64_t out,
                                                       at::Generator& gen) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    auto w = torch::rand({out, in}, gen) * (2 * bound) - bound;
    auto b = torch::rand({out}, gen) * (2 * bound) - bound;
    return {w, b};
}

torch::Tensor isotropic_gaussian_log_density(const torch::Tensor& z, double variance) {
    const double d = static_cast<double>(z.size(1));
    return -0.5 * z.pow(2).sum(1) / variance - 0.5 * d * std::log(2 * kPi * variance);
}

}  // namespace

AffineCouplingFlowImpl::AffineCouplingFlowImpl(const AffineCouplingFlowOptions& options)
    : options_(options) {
    const auto& o = options_;
    require_proposal(o.dim() >= 2, "dim must be >= 2 (a coupling splits the coordinates), got " +
                                       std::to_string(o.dim()));
    require_proposal(o.layers() >= 1, "layers must be >= 1, got " + std::to_string(o.layers()));
    require_proposal(o.hidden() >= 1, "hidden must be >= 1, got " + std::to_string(o.hidden()));
    require_proposal(std::isfinite(o.max_log_scale()) && o.max_log_scale() > 0,
                     "max_log_scale must be positive and finite");
    const int64_t d = o.dim();
    d1_ = d / 2;
    const int64_t d2 = d - d1_;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed());
    loc_ = register_parameter("loc", torch::zeros({d}));
    log_scale_ = register_parameter("log_scale", torch::zeros({d}));
    for (int64_t l = 0; l < o.layers(); ++l) {
        // Plain members, not buffers: a function of the seed (so never stored), and kept int64
        // when the module is converted to another floating type.
        const auto perm = torch::randperm(d, gen, torch::kLong);
        perms_.push_back(perm);
        inverse_perms_.push_back(torch::argsort(perm));
        Mlp m;
        auto [w1, b1] = default_linear(d1_, o.hidden(), gen);
        auto [w2, b2] = default_linear(o.hidden(), o.hidden(), gen);
        auto w3 = torch::randn({2 * d2, o.hidden()}, gen) * kLastLayerStd;
        const std::string p = "coupling" + std::to_string(l) + "_";
        m.w1 = register_parameter(p + "w1", w1);
        m.b1 = register_parameter(p + "b1", b1);
        m.w2 = register_parameter(p + "w2", w2);
        m.b2 = register_parameter(p + "b2", b2);
        m.w3 = register_parameter(p + "w3", w3);
        m.b3 = register_parameter(p + "b3", torch::zeros({2 * d2}));
        mlps_.push_back(m);
    }
}

void AffineCouplingFlowImpl::initialise_from(const torch::Tensor& x) {
    require_proposal(
        x.dim() == 2 && x.size(1) == options_.dim() && x.size(0) >= 2,
        "initialise_from needs an n × " + std::to_string(options_.dim()) + " tensor, n >= 2");
    torch::NoGradGuard no_grad;
    const auto xf = x.to(loc_.dtype());
    loc_.copy_(xf.mean(0));
    log_scale_.copy_(xf.std(0).clamp_min(1e-6).log());
}

std::pair<torch::Tensor, torch::Tensor> AffineCouplingFlowImpl::coupling(
    size_t l, const torch::Tensor& a) const {
    const auto& m = mlps_[l];
    auto h = torch::relu(torch::addmm(m.b1, a, m.w1.t()));
    h = torch::relu(torch::addmm(m.b2, h, m.w2.t()));
    const auto out = torch::addmm(m.b3, h, m.w3.t());
    const int64_t d2 = options_.dim() - d1_;
    const double smax = options_.max_log_scale();
    const auto s = smax * torch::tanh(out.narrow(1, 0, d2) / smax);
    return {s, out.narrow(1, d2, d2)};
}

std::pair<torch::Tensor, torch::Tensor> AffineCouplingFlowImpl::encode(
    const torch::Tensor& x) const {
    auto u = (x.to(loc_.dtype()) - loc_) * torch::exp(-log_scale_);
    auto log_det = (-log_scale_.sum()).expand({x.size(0)});
    const int64_t d2 = options_.dim() - d1_;
    for (size_t l = 0; l < mlps_.size(); ++l) {
        u = u.index_select(1, perms_[l]);
        const auto a = u.narrow(1, 0, d1_);
        const auto [s, t] = coupling(l, a);
        const auto b = u.narrow(1, d1_, d2) * torch::exp(s) + t;
        u = torch::cat({a, b}, 1);
        log_det = log_det + s.sum(1);
    }
    return {u, log_det};
}

std::pair<torch::Tensor, torch::Tensor> AffineCouplingFlowImpl::decode(
    const torch::Tensor& z) const {
    auto u = z.to(loc_.dtype());
    auto log_det = torch::zeros({z.size(0)}, u.options());
    const int64_t d2 = options_.dim() - d1_;
    for (size_t k = mlps_.size(); k-- > 0;) {
        const auto a = u.narrow(1, 0, d1_);
        const auto [s, t] = coupling(k, a);
        const auto b = (u.narrow(1, d1_, d2) - t) * torch::exp(-s);
        u = torch::cat({a, b}, 1).index_select(1, inverse_perms_[k]);
        log_det = log_det - s.sum(1);
    }
    return {u * torch::exp(log_scale_) + loc_, log_det + log_scale_.sum()};
}

torch::Tensor AffineCouplingFlowImpl::log_prob(const torch::Tensor& x, double base_variance) const {
    require_proposal(x.dim() == 2 && x.size(1) == options_.dim(),
                     "log_prob needs an n × " + std::to_string(options_.dim()) + " tensor");
    const auto [z, log_det] = encode(x);
    return isotropic_gaussian_log_density(z.to(torch::kFloat64), base_variance) +
           log_det.to(torch::kFloat64);
}

std::pair<torch::Tensor, torch::Tensor> AffineCouplingFlowImpl::sample(int64_t m, uint64_t seed,
                                                                       double base_variance) const {
    require_proposal(m >= 0, "sample count must be >= 0");
    require_proposal(std::isfinite(base_variance) && base_variance > 0,
                     "base variance must be positive and finite");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto z =
        torch::randn({m, options_.dim()}, gen, torch::kFloat64) * std::sqrt(base_variance);
    const auto [x, log_det] = decode(z.to(loc_.dtype()));
    // log q(x) = log N(z) − log|det ∂x/∂z|, with z the exact base draw.
    return {x.to(torch::kFloat64),
            isotropic_gaussian_log_density(z, base_variance) - log_det.to(torch::kFloat64)};
}

namespace {

std::string proposal_cache_key(const torch::Tensor& data, const AffineCouplingFlowOptions& f,
                               const FlowFitOptions& o) {
    const auto bytes = data.contiguous();
    const std::string raw(static_cast<const char*>(bytes.data_ptr()),
                          static_cast<size_t>(bytes.numel() * bytes.element_size()));
    std::ostringstream s;
    s << kProposalCacheVersion << " data=" << bytes.size(0) << "x" << bytes.size(1) << ":"
      << bytes.scalar_type() << ":" << std::hex << fnv1a64(raw) << std::dec
      << " layers=" << f.layers() << " hidden=" << f.hidden()
      << " smax=" << c_general(f.max_log_scale(), 17) << " flow_seed=" << f.seed()
      << " steps=" << o.steps << " batch=" << o.batch << " lr=" << c_general(o.lr, 17)
      << " fit_seed=" << o.seed;
    return s.str();
}

double mean_nll(const AffineCouplingFlowImpl& flow, const torch::Tensor& x) {
    torch::NoGradGuard no_grad;
    double sum = 0;
    for (int64_t i = 0; i < x.size(0); i += kNllChunk)
        sum -=
            flow.log_prob(x.narrow(0, i, std::min(kNllChunk, x.size(0) - i))).sum().item<double>();
    return sum / static_cast<double>(x.size(0));
}

}  // namespace

FlowFit fit_flow_proposal(const torch::Tensor& data, const AffineCouplingFlowOptions& flow_options,
                          const FlowFitOptions& fit_options) {
    require_proposal(data.dim() == 2 && data.is_floating_point() && data.size(0) >= 2 &&
                         data.size(1) == flow_options.dim(),
                     "fitting data must be a floating n × " + std::to_string(flow_options.dim()) +
                         " tensor with n >= 2");
    require_proposal(fit_options.steps >= 0, "fit steps must be >= 0");
    require_proposal(fit_options.batch >= 1, "fit batch must be >= 1");
    require_proposal(std::isfinite(fit_options.lr) && fit_options.lr > 0,
                     "fit lr must be positive");
    const auto x = data.detach().to(torch::kFloat32).contiguous();
    require_proposal(torch::isfinite(x).all().item<bool>(), "fitting data must be finite");

    FlowFit out;
    out.flow = AffineCouplingFlow(flow_options);
    const std::string key = proposal_cache_key(x, flow_options, fit_options);
    std::string path;
    if (!fit_options.cache_dir.empty()) {
        std::ostringstream name;
        name << fit_options.cache_dir << "/flow-proposal-" << std::hex << std::setw(16)
             << std::setfill('0') << fnv1a64(key) << ".pt";
        path = name.str();
    }
    std::vector<torch::Tensor> params;
    for (const auto& p : out.flow->parameters()) params.push_back(p);
    if (!path.empty()) {
        if (auto stored = load_keyed_tensors(path, key, params.size() + 1)) {
            bool shapes_match = true;
            for (size_t i = 0; i < params.size(); ++i)
                shapes_match = shapes_match && (*stored)[i].sizes() == params[i].sizes();
            if (shapes_match) {
                torch::NoGradGuard no_grad;
                for (size_t i = 0; i < params.size(); ++i) params[i].copy_((*stored)[i]);
                out.train_nll = (*stored)[params.size()].item<double>();
                out.from_cache = true;
                return out;
            }
        }
    }

    out.flow->initialise_from(x);
    torch::optim::Adam opt(out.flow->parameters(), torch::optim::AdamOptions(fit_options.lr));
    auto gen = at::make_generator<at::CPUGeneratorImpl>(fit_options.seed);
    const int64_t n = x.size(0);
    const int64_t batch = std::min<int64_t>(fit_options.batch, n);
    torch::Tensor order = torch::randperm(n, gen, torch::kLong);
    int64_t cursor = 0;
    for (int step = 0; step < fit_options.steps; ++step) {
        throw_if_stopped();
        if (cursor + batch > n) {
            order = torch::randperm(n, gen, torch::kLong);
            cursor = 0;
        }
        const auto xb = x.index_select(0, order.narrow(0, cursor, batch));
        cursor += batch;
        // Cosine decay to 0: the last steps average out the minibatch noise of the fit.
        const double lr = 0.5 * fit_options.lr *
                          (1 + std::cos(kPi * step / static_cast<double>(fit_options.steps)));
        for (auto& group : opt.param_groups())
            static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
        const auto loss = -out.flow->log_prob(xb).mean();
        opt.zero_grad();
        loss.backward();
        opt.step();
    }
    out.train_nll = mean_nll(*out.flow, x);
    if (!path.empty()) {
        std::vector<torch::Tensor> to_store;
        for (const auto& p : params) to_store.push_back(p.detach().clone());
        to_store.push_back(torch::tensor(out.train_nll, torch::kFloat64));
        store_keyed_tensors(path, key, to_store);
    }
    return out;
}

namespace {

void check_mixture(const BaseMixture& b) {
    require_proposal(!b.weights.empty() && b.weights.size() == b.variances.size(),
                     "a base mixture needs as many weights as variances, at least one");
    double sum = 0;
    for (double w : b.weights) {
        require_proposal(std::isfinite(w) && w > 0,
                         "base mixture weights must be positive and finite");
        sum += w;
    }
    require_proposal(std::abs(sum - 1.0) < 1e-9, "base mixture weights must sum to 1");
    for (double v : b.variances)
        require_proposal(std::isfinite(v) && v > 0,
                         "base mixture variances must be positive and finite");
}

// log Σ_k α_k N(z; 0, τ_k² I) per row of z (float64).
torch::Tensor mixture_base_log_density(const torch::Tensor& z, const BaseMixture& b) {
    if (b.weights.size() == 1) return isotropic_gaussian_log_density(z, b.variances[0]);
    std::vector<torch::Tensor> terms;
    for (size_t k = 0; k < b.weights.size(); ++k)
        terms.push_back(std::log(b.weights[k]) + isotropic_gaussian_log_density(z, b.variances[k]));
    return torch::logsumexp(torch::stack(terms, 1), 1);
}

}  // namespace

torch::Tensor mixture_log_prob(const AffineCouplingFlowImpl& flow, const torch::Tensor& x,
                               const BaseMixture& base) {
    check_mixture(base);
    require_proposal(x.dim() == 2 && x.size(1) == flow.options().dim(),
                     "log_prob needs an n × " + std::to_string(flow.options().dim()) + " tensor");
    const auto [z, log_det] = flow.encode(x);
    return mixture_base_log_density(z.to(torch::kFloat64), base) + log_det.to(torch::kFloat64);
}

std::pair<torch::Tensor, torch::Tensor> mixture_sample(const AffineCouplingFlowImpl& flow,
                                                       int64_t m, uint64_t seed,
                                                       const BaseMixture& base) {
    check_mixture(base);
    require_proposal(m >= 1, "sample count must be >= 1");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto weights = torch::tensor(base.weights, torch::kFloat64);
    const auto component = torch::multinomial(weights, m, /*replacement=*/true, gen);
    const auto sd =
        torch::tensor(base.variances, torch::kFloat64).sqrt().index_select(0, component);
    const auto z = torch::randn({m, flow.options().dim()}, gen, torch::kFloat64) * sd.unsqueeze(1);
    const auto [x, log_det] = flow.decode(z);
    return {x.to(torch::kFloat64), mixture_base_log_density(z, base) - log_det.to(torch::kFloat64)};
}

AffineCouplingFlow clone_flow(const AffineCouplingFlowImpl& flow) {
    AffineCouplingFlow out(flow.options());
    torch::NoGradGuard no_grad;
    const auto src = flow.parameters();
    auto dst = out->parameters();
    for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
    return out;
}

EnergyFit fit_flow_to_energy(AffineCouplingFlowImpl& flow,
                             const std::function<torch::Tensor(const torch::Tensor&)>& energy,
                             const EnergyFitOptions& o) {
    require_proposal(o.max_steps >= 0, "energy fit max_steps must be >= 0");
    require_proposal(o.batch >= 1, "energy fit batch must be >= 1");
    require_proposal(std::isfinite(o.lr) && o.lr > 0, "energy fit lr must be positive");
    require_proposal(o.check_every >= 1, "energy fit check_every must be >= 1");
    require_proposal(o.probe_samples >= 2, "energy fit probe_samples must be >= 2");
    require_proposal(std::isfinite(o.base_variance) && o.base_variance > 0,
                     "energy fit base variance must be positive and finite");
    check_mixture(o.base);
    torch::AutoGradMode enable(true);  // also when the caller evaluates under no-grad
    auto params = flow.parameters();
    for (const auto& p : params)
        require_proposal(p.requires_grad(),
                         "energy fit needs a flow whose parameters require_proposal grad");
    const int64_t dim = flow.options().dim();
    auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
    uint64_t probe_seed = o.seed ^ 0x5DEECE66DULL;
    const auto probe = [&]() {
        torch::NoGradGuard no_grad;
        const auto [x, log_q] = mixture_sample(flow, o.probe_samples, probe_seed++, o.base);
        std::vector<torch::Tensor> parts;
        for (int64_t i = 0; i < x.size(0); i += kNllChunk)
            parts.push_back(
                energy(x.narrow(0, i, std::min(kNllChunk, x.size(0) - i)).to(torch::kFloat32))
                    .to(torch::kFloat64));
        return effective_sample_size(torch::cat(parts), log_q) /
               static_cast<double>(o.probe_samples);
    };
    EnergyFit out;
    out.start_ess_fraction = out.ess_fraction = probe();
    if (out.ess_fraction >= o.target_ess || o.max_steps == 0) return out;
    std::vector<torch::Tensor> best;
    for (const auto& p : params) best.push_back(p.detach().clone());
    torch::optim::Adam opt(params, torch::optim::AdamOptions(o.lr));
    const double sd = std::sqrt(o.base_variance);
    for (int step = 0; step < o.max_steps; ++step) {
        throw_if_stopped();
        const double lr =
            o.lr * (0.1 + 0.45 * (1 + std::cos(kPi * step / static_cast<double>(o.max_steps))));
        for (auto& group : opt.param_groups())
            static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
        const auto z = torch::randn({o.batch, dim}, gen) * sd;
        const auto [x, log_det] = flow.decode(z);
        // log q(x) = log N(z) − log_det, and log N(z) does not depend on φ.
        const auto loss = (energy(x).to(torch::kFloat32) - log_det).mean();
        auto grads = torch::autograd::grad({loss}, params, {}, /*retain_graph=*/false,
                                           /*create_graph=*/false, /*allow_unused=*/true);
        bool finite = std::isfinite(loss.item<double>());
        for (const auto& g : grads)
            finite = finite && (!g.defined() || torch::isfinite(g).all().item<bool>());
        if (finite) {  // a non-finite step (a draw far out in an energy's tail) is skipped
            for (size_t i = 0; i < params.size(); ++i)
                params[i].mutable_grad() =
                    grads[i].defined() ? grads[i] : torch::zeros_like(params[i]);
            opt.step();
        }
        ++out.steps;
        if ((step + 1) % o.check_every == 0 || step + 1 == o.max_steps) {
            const double ess = probe();
            if (ess > out.ess_fraction) {
                out.ess_fraction = ess;
                torch::NoGradGuard no_grad;
                for (size_t i = 0; i < params.size(); ++i) best[i].copy_(params[i]);
            }
            if (out.ess_fraction >= o.target_ess) break;
        }
    }
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(best[i]);
    return out;
}

}  // namespace liftlab
