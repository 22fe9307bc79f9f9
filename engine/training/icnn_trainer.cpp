#include "training/icnn_trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "core/activity.h"
#include "core/stopwatch.h"
#include "diagnostics/cross_covariance.h"
#include "ebm/log_concave_targets.h"
#include "ebm/quadrature.h"
#include "export/model_export.h"
#include "run/state_archive.h"
#include "training/density_models.h"
#include "training/fused_adam.h"
#include "training/optimizer_factory.h"

namespace liftlab {

namespace {

int64_t count_trainable(torch::nn::Module& m) {
    int64_t n = 0;
    for (const auto& p : m.parameters())
        if (p.requires_grad()) n += p.numel();
    return n;
}

// Seeds derived from the run seed for the diagnostics, so they never touch the training stream.
constexpr std::uint64_t kIndependentStream = 0xD1CE;
constexpr std::uint64_t kProbeStream = 0x5A5A;
constexpr std::uint64_t kTraceSeed = 7;         // the same traced coordinates for every method
constexpr std::uint64_t kFreshStream = 0xF2E5;  // task.fresh_samples: the per-batch sample seeds
constexpr std::uint64_t kTestStream = 0x7E57;   // task.test_per_seed: the seed's test samples
// MethodSpec::init_noise: one stream per seed, the same for every strategy (the reference draws
// the symmetric perturbation of every arm from one seed offset).
constexpr std::uint64_t kInitNoiseStream = 0x1A17;

// Dwell statistics of the readout shoulder (final metrics).
void add_shoulder_statistics(const ShoulderTracker& shoulder, std::map<std::string, double>& out) {
    out["median_dwell"] = shoulder.median_dwell();
    out["exit_rate"] = shoulder.exit_rate();
    out["exits"] = static_cast<double>(shoulder.exits());
    out["censored_dwells"] = static_cast<double>(shoulder.censored());
}

// σ²_Jac of the probe iterates `theta` against the slack gradients (a structural zero without a
// slack), and sigma2_jac_theta against the θ̃-gradients at the fixed iterate (final metrics).
void add_cross_covariances(const torch::Tensor& theta, bool slack,
                           const std::vector<torch::Tensor>& grads_slack,
                           const std::vector<torch::Tensor>& grads_theta, int permutations,
                           std::uint64_t seed, std::map<std::string, double>& out) {
    out["slack"] = slack ? 1.0 : 0.0;
    if (slack) {
        const auto r = cross_covariance_trace(theta, torch::stack(grads_slack), permutations, seed);
        out["sigma2_jac"] = r.sigma2_jac;
        out["p_value"] = r.p_value;
        out["sigma2_jac_null_sd"] = r.null_sd;
    } else {
        out["sigma2_jac"] = 0.0;  // structural: J_b = 0 (no p-value, no null)
    }
    const auto fixed = cross_covariance_trace(theta, torch::stack(grads_theta), permutations, seed);
    out["iterate_spread"] = fixed.iterate_spread;
    out["sigma2_jac_theta"] = fixed.sigma2_jac;
    out["p_value_theta"] = fixed.p_value;
    out["sigma2_jac_theta_null_sd"] = fixed.null_sd;
}

constexpr std::uint64_t kChordStream = 0xC402D;  // the chords of the convexity check
constexpr int64_t kChords = 2048;
// A chord violates convexity when E at its interior point exceeds the chord by more than this
// fraction of 1 + |E(a)| + |E(b)| (float32 energies agree with themselves to ~1e-6 of that).
constexpr double kChordTolerance = 1e-4;

// The first n entries of a weight list (the constrained ones).
std::vector<torch::Tensor> first_n(const std::vector<torch::Tensor>& v, size_t n) {
    return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size()))};
}

}  // namespace

int64_t IcnnTrainer::matched_wide_width(const ExperimentSpec& spec, int64_t input_dim) {
    torch::NoGradGuard no_grad;
    IcnnImpl lifter(IcnnOptions(input_dim)
                        .width(spec.icnn.width)
                        .layers(spec.icnn.layers)
                        .strategy(positivity_name(PositivityMap::Lifted)));
    const int64_t target = count_trainable(lifter);  // φ, Θ_E, b (the template is frozen)
    // Direct softplus with width w: input layer d·w + w, skips (L−1)(d·w + w), w_x d, and the
    // constrained (L−1)w² + w. Increasing in w: take the first width reaching the target.
    const int64_t d = input_dim, L = spec.icnn.layers;
    for (int64_t w = spec.icnn.width;; ++w) {
        const int64_t n = L * (d * w + w) + d + (L - 1) * w * w + w;
        if (n >= target) return w;
    }
}

IcnnTrainer::IcnnTrainer(const ExperimentSpec& spec, const MethodSpec& method, const Dataset& data,
                         std::uint64_t seed)
    : spec_(spec),
      data_(data),
      seed_(seed),
      width_(method_info(method.name).wide ? matched_wide_width(spec, data.input_dim())
                                           : spec.icnn.width),
      sampler_(data.n_train(), spec.batch_size, seed),
      independent_sampler_(data.n_train(), spec.batch_size, seed ^ kIndependentStream),
      fresh_seeds_(seed ^ kFreshStream) {
    // Same seed: the same unconstrained initialisation for every strategy of a run (the ICNN
    // builds its unconstrained layers before the strategy).
    torch::manual_seed(seed);
    model_ = make_density_model(spec, data, method.name, width_);
    icnn_ = model_->icnn();
    if (method.init_noise > 0) {
        auto gen = at::make_generator<at::CPUGeneratorImpl>(seed ^ kInitNoiseStream);
        icnn_->strategy().perturb_init(method.init_noise, gen);
    }
    const int64_t n_ref = std::min<int64_t>(spec.icnn.reference_size, data.n_train());
    reference_ = data.x_train.narrow(0, 0, n_ref).contiguous();
    if (spec.task.test_per_seed) {
        test_ = model_->fresh_batch(spec.task.n_test, seed ^ kTestStream);
        if (!test_.defined())
            throw std::invalid_argument("task.test_per_seed: target '" + spec.task.target +
                                        "' cannot be sampled");
    }

    const double lr = method.lr > 0 ? method.lr : spec.optimizer.lr;
    auto params = model_->parameters();
    if (spec.optimizer.kind == "adam") {  // torch's Adam update, fused (training/fused_adam.h)
        adam_ = std::make_unique<FusedAdam>(params, lr);
        // The lifter's readout gradients g hᵀ stay factored (nn/outer_product_gradient.h).
        adam_->factored(icnn_->strategy().factor_gradients());
    } else
        optimizer_ = make_optimizer(spec.optimizer, lr, params);

    int64_t coords = 0;
    for (const auto& shape : icnn_->constrained_shapes()) {
        int64_t n = 1;
        for (auto s : shape) n *= s;
        coords += n;
    }
    if (spec.diagnostics.shoulder_every > 0) shoulder_.emplace(coords);
    // Traced coordinates: half from the readout w_out (the last constrained tensor), half from
    // the hidden Wz; chosen by a fixed seed so every method traces the same positions.
    const int n_trace = std::min<int64_t>(spec.diagnostics.trace_coordinates, coords);
    if (n_trace > 0) {
        std::mt19937_64 rng(kTraceSeed);
        int64_t n_out = 1;  // the elements of the last constrained tensor (a scalar has one)
        for (const int64_t size : icnn_->constrained_shapes().back()) n_out *= size;
        const int64_t out_start = coords - n_out;
        std::vector<int64_t> out_pool, hidden_pool;
        for (int64_t i = out_start; i < coords; ++i) out_pool.push_back(i);
        for (int64_t i = 0; i < out_start; ++i) hidden_pool.push_back(i);
        std::shuffle(out_pool.begin(), out_pool.end(), rng);
        std::shuffle(hidden_pool.begin(), hidden_pool.end(), rng);
        for (int i = 0; i < n_trace; ++i) {
            auto& pool =
                (i % 2 == 0 || hidden_pool.empty()) && !out_pool.empty() ? out_pool : hidden_pool;
            trace_coordinates_.push_back(pool.back());
            pool.pop_back();
        }
        std::sort(trace_coordinates_.begin(), trace_coordinates_.end());
    }
}

IcnnTrainer::~IcnnTrainer() = default;

torch::Tensor IcnnTrainer::flat(const std::vector<torch::Tensor>& parts) const {
    std::vector<torch::Tensor> f;
    for (const auto& p : parts) f.push_back(p.reshape({-1}));
    return torch::cat(f);
}

torch::Tensor IcnnTrainer::nll_with_weights(const torch::Tensor& x,
                                            const std::vector<torch::Tensor>& constrained) {
    return model_->nll(x, constrained, steps_);
}

const torch::Tensor& IcnnTrainer::test_set() const {
    return test_.defined() ? test_ : data_.x_test;
}

std::vector<torch::Tensor> IcnnTrainer::scoring_weights(const torch::Tensor& scored) {
    auto& strategy = icnn_->strategy();
    if (spec_.icnn.eval_conditioning != "scored") return strategy.readout(reference_pre_readout());
    strategy.set_independent_batch(scored);
    return strategy.readout(strategy.pre_readout(scored));
}

std::vector<torch::Tensor> IcnnTrainer::reference_pre_readout() {
    auto& strategy = icnn_->strategy();
    strategy.set_independent_batch(reference_);
    return strategy.pre_readout(reference_);
}

torch::Tensor IcnnTrainer::next_batch(BatchSampler& sampler) {
    if (spec_.task.fresh_samples) {
        const auto x = model_->fresh_batch(spec_.batch_size, fresh_seeds_());
        if (!x.defined())
            throw std::invalid_argument("task.fresh_samples: target '" + spec_.task.target +
                                        "' cannot be sampled");
        return x;
    }
    return data_.x_train.index_select(0, sampler.next());
}

std::vector<torch::Tensor> IcnnTrainer::theta_weights() {
    auto& strategy = icnn_->strategy();
    auto w = strategy.readout(reference_pre_readout());
    return strategy.emits_free() ? w : icnn_->with_template_free(std::move(w));
}

std::vector<torch::Tensor> IcnnTrainer::extra_parameters() {
    return model_->extra_parameters();
}

void IcnnTrainer::observe_shoulder(const std::vector<torch::Tensor>& pre) {
    const auto f = flat(first_n(pre, icnn_->strategy().constrained_count())).detach();
    if (shoulder_) shoulder_->observe(steps_, shoulder_mask(f, icnn_->strategy().projected()));
    if (!trace_coordinates_.empty()) {
        const auto values = f.to(torch::kFloat64).contiguous();
        const double* v = values.data_ptr<double>();
        for (auto c : trace_coordinates_) traces_.push_back({steps_, static_cast<int>(c), v[c]});
    }
}

double IcnnTrainer::step() {
    const auto t0 = Clock::now();
    ++steps_;
    const auto xb = next_batch(sampler_);
    auto& strategy = icnn_->strategy();
    if (strategy.reads_independent_batch())
        strategy.set_independent_batch(next_batch(independent_sampler_));
    // The conditioning input is the loss batch, detached (the strategy detaches it).
    const auto pre = strategy.pre_readout(xb);
    const bool observe = spec_.diagnostics.shoulder_every > 0 &&
                         (steps_ == 1 || steps_ % spec_.diagnostics.shoulder_every == 0);
    if (observe) {
        torch::NoGradGuard no_grad;
        observe_shoulder(pre);
    }
    const auto loss = model_->nll(xb, strategy.readout(pre), steps_);
    if (adam_) {
        adam_->zero_grad();
        loss.backward();
        adam_->step(spec_.icnn.grad_clip);  // the clip folded into the same pass
    } else {
        optimizer_->zero_grad();
        loss.backward();
        if (spec_.icnn.grad_clip > 0)
            torch::nn::utils::clip_grad_norm_(model_->parameters(), spec_.icnn.grad_clip);
        optimizer_->step();
    }
    icnn_->after_step();
    step_seconds_ += seconds_since(t0);
    return loss.item<double>();
}

std::map<std::string, double> IcnnTrainer::evaluate_test() {
    torch::NoGradGuard no_grad;
    const auto& x = test_set();
    auto out = model_->evaluate(x, scoring_weights(x));
    if (push_mask_.defined()) {
        const auto pushed = push_mask_.sum().item<double>();
        const auto out_now = push_mask_.logical_and(reference_shoulder().logical_not());
        out["push_escaped"] = pushed > 0 ? out_now.sum().item<double>() / pushed : 0.0;
    }
    last_evaluation_ = out;
    if (shoulder_ && shoulder_->observations() > 0) {
        out["shoulder_occupancy"] = shoulder_->occupancy();
        out["exits"] = static_cast<double>(shoulder_->exits());
    }
    return out;
}

double IcnnTrainer::train_set_loss() {
    torch::NoGradGuard no_grad;
    return model_->evaluate(data_.x_train, scoring_weights(data_.x_train)).at("test_loss");
}

bool IcnnTrainer::parameters_finite() {
    torch::NoGradGuard no_grad;
    for (const auto& p : model_->parameters())
        if (!torch::isfinite(p).all().item<bool>()) return false;
    return true;
}

void IcnnTrainer::add_chord_convexity(std::map<std::string, double>& out) {
    // Reported, not assumed: a TorchScript ICNN's named constraints need not make it convex.
    // Chords between random pairs of test samples, t ~ U(0, 1):
    // gap = (E(t a + (1 − t) b) − t E(a) − (1 − t) E(b)) / (1 + |E(a)| + |E(b)|) ≤ 0 if convex.
    torch::NoGradGuard no_grad;
    const auto& x = test_set();
    if (x.dim() != 2 || x.size(0) < 2) return;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed_ ^ kChordStream);
    const auto a = x.index_select(0, torch::randint(x.size(0), {kChords}, gen, torch::kLong));
    const auto b = x.index_select(0, torch::randint(x.size(0), {kChords}, gen, torch::kLong));
    const auto t = torch::rand({kChords, 1}, gen, torch::kFloat32);
    const auto weights = theta_weights();
    auto energy = [&](const torch::Tensor& p) {
        return icnn_->energy_with_weights(p, weights).to(torch::kFloat64);
    };
    const auto ea = energy(a), eb = energy(b), em = energy(t * a + (1 - t) * b);
    const auto t64 = t.squeeze(1).to(torch::kFloat64);
    const auto gap = (em - t64 * ea - (1 - t64) * eb) / (1 + ea.abs() + eb.abs());
    out["chord_convexity_gap"] = gap.max().item<double>();
    out["chord_convexity_violations"] =
        (gap > kChordTolerance).to(torch::kFloat64).mean().item<double>();
}

std::map<std::string, double> IcnnTrainer::final_diagnostics() {
    std::map<std::string, double> out;
    if (shoulder_ && shoulder_->observations() > 0) add_shoulder_statistics(*shoulder_, out);
    add_chord_convexity(out);
    const int B = spec_.diagnostics.jacobian_batches;
    if (B < 3) return out;
    // σ²_Jac (docs/methods.md §4.1, as the reference's CrossCovAccumulator): B i.i.d.
    // probe batches; each one forward pass emits θ̃_b, the batch's OWN pre-readout constrained
    // weights, and g_b = ∂ℓ_b/∂b, the gradient of that same pass's full loss with respect to the
    // slack. θ̃ = b + Θ_E h, so ∂ℓ/∂b = ∂ℓ/∂θ̃ at the emitted iterate. Without a slack there is no
    // J_b: the reading is a structural zero (slack = 0), never estimated.
    // Beside it, `sigma2_jac_theta`: the un-contracted θ̃-gradient of the batch term at the FIXED
    // reference iterate — defined for every strategy, and not zero without a slack in general.
    auto& strategy = icnn_->strategy();
    const size_t nc = strategy.constrained_count();
    const bool slack = strategy.has_slack();
    BatchSampler probe(data_.n_train(), spec_.batch_size, seed_ ^ kProbeStream);
    BatchSampler probe_independent(data_.n_train(), spec_.batch_size,
                                   seed_ ^ kProbeStream ^ kIndependentStream);
    // Probe batches never draw from the training stream (fresh samples: their own seeds).
    std::mt19937_64 probe_seeds(seed_ ^ kProbeStream ^ kFreshStream);
    auto probe_batch = [&](BatchSampler& sampler) {
        if (!spec_.task.fresh_samples) return data_.x_train.index_select(0, sampler.next());
        return model_->fresh_batch(spec_.batch_size, probe_seeds());
    };
    std::vector<torch::Tensor> ref_pre;
    {
        torch::NoGradGuard no_grad;
        ref_pre = reference_pre_readout();
    }
    // ∂(loss)/∂θ̃ of the constrained entries of `pre`, the free entries held at their values.
    auto grad_at = [&](const torch::Tensor& xb, const std::vector<torch::Tensor>& pre,
                       bool full_loss) {
        std::vector<torch::Tensor> leaves, all;
        for (size_t i = 0; i < pre.size(); ++i) {
            all.push_back(i < nc ? pre[i].detach().clone().requires_grad_(true) : pre[i].detach());
            if (i < nc) leaves.push_back(all.back());
        }
        const auto weights = strategy.readout(all);
        const auto loss =
            full_loss ? model_->nll(xb, weights, steps_) : model_->batch_term(xb, weights, steps_);
        return flat(torch::autograd::grad({loss}, leaves)).to(torch::kFloat64);
    };
    std::vector<torch::Tensor> iterates, grads_slack, grads_theta;
    for (int b = 0; b < B; ++b) {
        throw_if_stopped();
        const auto xb = probe_batch(probe);
        if (strategy.reads_independent_batch())
            strategy.set_independent_batch(probe_batch(probe_independent));
        std::vector<torch::Tensor> pre_b;
        {
            torch::NoGradGuard no_grad;
            pre_b = strategy.pre_readout(xb);
        }
        iterates.push_back(flat(first_n(pre_b, nc)).to(torch::kFloat64));
        if (slack) grads_slack.push_back(grad_at(xb, pre_b, /*full_loss=*/true));
        // At the fixed iterate the θ-only part of the loss (log Z) adds the same vector to every
        // g_b and cancels in the centring, so only the batch term is differentiated.
        grads_theta.push_back(grad_at(xb, ref_pre, /*full_loss=*/false));
    }
    add_cross_covariances(torch::stack(iterates), slack, grads_slack, grads_theta,
                          spec_.diagnostics.permutations, seed_, out);
    return out;
}

std::string IcnnTrainer::resume_blocker() const {
    return model_->resume_blocker();
}

void IcnnTrainer::save_state(StateArchive& a, const std::string& prefix) {
    a.put_tensors(prefix + "params", model_->parameters());
    if (adam_)
        adam_->save_state(a, prefix + "adam.");
    else
        save_optimizer_state(*optimizer_, a, prefix + "opt.");
    sampler_.save_state(a, prefix + "sampler.");
    independent_sampler_.save_state(a, prefix + "independent.");
    a.put_rng(prefix + "fresh_seeds", fresh_seeds_);
    if (shoulder_) shoulder_->save_state(a, prefix + "shoulder.");
    a.put_int(prefix + "steps", steps_);
    a.put_real(prefix + "step_seconds", step_seconds_);
    if (push_mask_.defined()) a.put(prefix + "push_mask", push_mask_.to(torch::kUInt8));
    model_->save_state(a, prefix + "model.");
}

void IcnnTrainer::load_state(const StateArchive& a, const std::string& prefix) {
    a.copy_into(prefix + "params", model_->parameters());
    if (adam_)
        adam_->load_state(a, prefix + "adam.");
    else
        load_optimizer_state(*optimizer_, a, prefix + "opt.");
    sampler_.load_state(a, prefix + "sampler.");
    independent_sampler_.load_state(a, prefix + "independent.");
    a.rng(prefix + "fresh_seeds", fresh_seeds_);
    if (shoulder_) shoulder_->load_state(a, prefix + "shoulder.");
    steps_ = static_cast<int>(a.integer(prefix + "steps"));
    step_seconds_ = a.real(prefix + "step_seconds");
    last_evaluation_.clear();
    push_mask_ = torch::Tensor();
    if (a.has(prefix + "push_mask")) {
        const auto m = a.tensor(prefix + "push_mask");
        if (m.dim() != 1 || (shoulder_ && m.numel() != shoulder_->coordinates()))
            throw std::runtime_error("push_mask: wrong size");
        push_mask_ = m.to(torch::kBool);
    }
    model_->load_state(a, prefix + "model.");
}

void IcnnTrainer::start_from_method(Trainer& source) {
    auto* src = dynamic_cast<IcnnTrainer*>(&source);
    if (!src) throw std::invalid_argument("an ICNN strategy starts only from another strategy");
    if (src->icnn_->constrained_shapes() != icnn_->constrained_shapes() ||
        src->icnn_->free_shapes() != icnn_->free_shapes())
        throw std::invalid_argument("the two strategies train ICNNs of other shapes (widths " +
                                    std::to_string(src->width_) + " and " + std::to_string(width_) +
                                    ")");
    torch::NoGradGuard no_grad;
    auto& from = src->icnn_->strategy();
    auto& to = icnn_->strategy();
    // The weights the source's test loss was scored with (eval_conditioning reference): for the
    // lifter family, emitted at the reference set; the direct strategies' own.
    auto pre = src->reference_pre_readout();
    const auto nc = from.constrained_count();
    std::vector<torch::Tensor> constrained(pre.begin(),
                                           pre.begin() + static_cast<std::ptrdiff_t>(nc));
    std::vector<torch::Tensor> free;
    if (from.emits_free())
        free.assign(pre.begin() + static_cast<std::ptrdiff_t>(nc), pre.end());
    else
        for (const auto& t : src->icnn_->free_parameters()) free.push_back(t.detach().clone());
    for (auto& t : constrained) t = t.detach().clone();
    for (auto& t : free) t = t.detach().clone();
    to.fork_from(constrained, from.projected(), free);
    if (!to.emits_free()) {
        const auto own = icnn_->free_parameters();
        for (size_t i = 0; i < own.size(); ++i) own[i].copy_(free.at(i).view_as(own[i]));
    }
    const auto extra_from = src->extra_parameters(), extra_to = extra_parameters();
    if (extra_from.size() != extra_to.size())
        throw std::invalid_argument("the two models have other extra parameters");
    for (size_t i = 0; i < extra_to.size(); ++i) extra_to[i].copy_(extra_from[i]);
    StateArchive carried;
    src->sampler_.save_state(carried, "sampler.");
    src->independent_sampler_.save_state(carried, "independent.");
    sampler_.load_state(carried, "sampler.");
    independent_sampler_.load_state(carried, "independent.");
    fresh_seeds_ = src->fresh_seeds_;
    steps_ = src->steps_;
    step_seconds_ = src->step_seconds_;
    push_mask_ = src->push_mask_.defined() ? src->push_mask_.clone() : torch::Tensor();
    last_evaluation_.clear();
    traces_.clear();
}

std::map<std::string, double> IcnnTrainer::live_settings() const {
    return {{"lr", adam_ ? adam_->lr() : optimizer_->param_groups().front().options().get_lr()}};
}

void IcnnTrainer::set_live_setting(const std::string& key, double value) {
    if (key != "lr")
        throw std::invalid_argument("an ICNN strategy's live setting is 'lr', not '" + key + "'");
    if (!(value > 0)) throw std::invalid_argument("lr must be positive");
    if (adam_)
        adam_->set_lr(value);
    else
        for (auto& group : optimizer_->param_groups()) group.options().set_lr(value);
}

torch::Tensor IcnnTrainer::reference_shoulder() {
    torch::NoGradGuard no_grad;
    auto& strategy = icnn_->strategy();
    return shoulder_mask(flat(first_n(reference_pre_readout(), strategy.constrained_count())),
                         strategy.projected());
}

std::pair<double, double> IcnnTrainer::push_into_shoulder(const std::string& layers,
                                                          double fraction, double depth,
                                                          std::uint64_t seed) {
    torch::NoGradGuard no_grad;
    auto& strategy = icnn_->strategy();
    const auto& shapes = strategy.shapes();
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    std::vector<torch::Tensor> masks, flat_masks, chosen;
    for (size_t i = 0; i < shapes.size(); ++i) {
        int64_t n = 1;
        for (auto d : shapes[i]) n *= d;
        const bool last = i + 1 == shapes.size();
        const bool pick = layers == "all" || (layers == "readout" ? last : !last);
        auto m = torch::zeros({n}, torch::kBool);
        if (pick && n > 0) {
            const int64_t k = std::min<int64_t>(
                n, std::max<int64_t>(1, std::llround(fraction * static_cast<double>(n))));
            m.index_fill_(0, torch::randperm(n, gen, torch::kLong).narrow(0, 0, k), true);
        }
        masks.push_back(m.view(shapes[i]));
        flat_masks.push_back(m);
        chosen.push_back(torch::full({n}, pick, torch::kBool));
    }
    const auto layer = torch::cat(chosen);
    auto occupancy = [&] {
        return reference_shoulder().index({layer}).to(torch::kFloat64).mean().item<double>();
    };
    const double before = occupancy();
    strategy.push(masks, depth);
    const auto pushed = torch::cat(flat_masks);
    push_mask_ = push_mask_.defined() ? push_mask_.logical_or(pushed) : pushed;
    return {before, occupancy()};
}

bool IcnnTrainer::export_model(const std::string& path) {
    const std::string& kind = spec_.task.kind;
    if (kind != "icnn-ebm-1d" && kind != "icnn-ebm-nd") return false;
    torch::NoGradGuard no_grad;
    auto module = icnn_module(*icnn_, theta_weights());
    if (last_evaluation_.empty()) evaluate_test();
    add_float_attribute(module, "log_z", last_evaluation_.at("log_z"));
    if (kind == "icnn-ebm-1d") {
        const auto range = make_log_concave_target(spec_.task.target)->range();
        add_float_attribute(module, "quadrature_lo", range.lo);
        add_float_attribute(module, "quadrature_hi", range.hi);
        add_float_attribute(module, "quadrature_points", spec_.icnn.quadrature_points);
    }
    save_module(module, path);
    return true;
}

std::vector<DensityDiagnostics::TraceSample> IcnnTrainer::drain_traces() {
    std::vector<TraceSample> out;
    out.swap(traces_);
    return out;
}

std::vector<int64_t> IcnnTrainer::dwell_times() const {
    return shoulder_ ? shoulder_->completed_dwells() : std::vector<int64_t>{};
}

std::vector<torch::Tensor> IcnnTrainer::lifted_parameters() {
    return model_->parameters();
}

std::map<std::string, torch::Tensor> IcnnTrainer::checkpoint() {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> theta_parts = theta_weights();
    for (const auto& p : model_->extra_parameters()) theta_parts.push_back(p);
    std::vector<torch::Tensor> lifted_parts;
    for (const auto& p : model_->parameters()) lifted_parts.push_back(p);
    return {{"theta", flat(theta_parts).to(torch::kFloat32)},
            {"lifted", flat(lifted_parts).to(torch::kFloat32)}};
}

}  // namespace liftlab
