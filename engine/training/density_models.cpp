#include "training/density_models.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "core/activity.h"
#include "data/dataset.h"
#include "ebm/flow_proposal.h"
#include "ebm/importance.h"
#include "ebm/log_concave_targets.h"
#include "ebm/nd_targets.h"
#include "ebm/quadrature.h"
#include "ebm/toy2d.h"
#include "flows/cp_flow.h"
#include "methods/method_registry.h"
#include "run/state_archive.h"

namespace liftlab {

std::vector<torch::Tensor> DensityModel::parameters() {
    std::vector<torch::Tensor> out;
    for (const auto& p : all_parameters())
        if (p.requires_grad()) out.push_back(p);
    return out;
}

PositivityOptions positivity_options(const IcnnSpec& icnn) {
    PositivityOptions o;
    o.lifter_body.assign(icnn.lifter_body.begin(), icnn.lifter_body.end());
    o.lifter_pool_norm = icnn.lifter_pool_norm;
    return o;
}

namespace {

IcnnOptions icnn_options(const ExperimentSpec& spec, int64_t dim, const std::string& strategy,
                         int64_t width) {
    auto o = IcnnOptions(dim)
                 .width(width)
                 .layers(spec.icnn.layers)
                 .strategy(strategy)
                 .quadratic(spec.icnn.strong_convexity)
                 .positivity(positivity_options(spec.icnn));
    if (!spec.icnn.script.empty()) {
        // Each trainer its own copy of the module (the parameter slots are swapped per call);
        // the run checked it on the task's samples before any trainer was built.
        o.script(TorchScriptIcnn::load(spec.icnn, dim, torch::zeros({2, dim})))
            .start_from_file(spec.icnn.init == "file");
    }
    return o;
}

// icnn-ebm-1d: NLL = mean E(x) + log Z. The reported log Z and TV use the trapezoid rule on the
// target's range (docs/methods.md §5.1: 8000 points); the training log Z uses composite
// Gauss–Legendre on icnn.train_quadrature_points nodes (or the same trapezoid grid when 0), which
// agrees with it to ~1e-6 nats on smooth energies at a fraction of the ICNN evaluations.
class Ebm1dModel : public DensityModel {
public:
    Ebm1dModel(const ExperimentSpec& spec, const std::string& strategy, int64_t width)
        : target_(make_log_concave_target(spec.task.target)),
          icnn_(icnn_options(spec, 1, strategy, width)) {
        grid_ = quadrature_grid(target_->range(), spec.icnn.quadrature_points);
        grid_f_ = grid_.to(torch::kFloat32).unsqueeze(1);
        target_log_p_ = target_->log_density(grid_);
        train_rule_ = spec.icnn.train_quadrature_points > 0
                          ? gauss_legendre_rule(target_->range(), spec.icnn.train_quadrature_points)
                          : trapezoid_rule(target_->range(), spec.icnn.quadrature_points);
        train_nodes_f_ = train_rule_.nodes.to(torch::kFloat32).unsqueeze(1);
    }
    Icnn icnn() override { return icnn_; }
    torch::Tensor fresh_batch(int64_t n, std::uint64_t seed) override {
        return target_->sample(n, seed).to(torch::kFloat32).unsqueeze(1);
    }
    // The training-time log Z (autograd through the energies at the rule's nodes).
    torch::Tensor log_z(const std::vector<torch::Tensor>& constrained) {
        const auto e = icnn_->energy_with_weights(train_nodes_f_, constrained).to(torch::kFloat64);
        return log_partition(e, train_rule_);
    }
    // One ICNN pass over the batch and the rule's nodes together (one set of matrix products
    // instead of two; each row's energy is the same as in separate passes).
    torch::Tensor nll(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                      int /*step*/) override {
        const int64_t n = x.size(0);
        const auto e = icnn_->energy_with_weights(torch::cat({x, train_nodes_f_}), constrained)
                           .to(torch::kFloat64);
        return e.narrow(0, 0, n).mean() + log_partition(e.narrow(0, n, e.size(0) - n), train_rule_);
    }
    torch::Tensor batch_term(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                             int /*step*/) override {
        return icnn_->energy_with_weights(x, constrained).to(torch::kFloat64).mean();
    }
    std::map<std::string, double> evaluate(const torch::Tensor& x,
                                           const std::vector<torch::Tensor>& constrained) override {
        const auto e_grid = icnn_->energy_with_weights(grid_f_, constrained).to(torch::kFloat64);
        const double lz = log_partition(e_grid, grid_).item<double>();
        const double mean_e =
            icnn_->energy_with_weights(x, constrained).to(torch::kFloat64).mean().item<double>();
        return {{"test_loss", mean_e + lz},
                {"log_z", lz},
                {"tv", total_variation(target_log_p_, -e_grid, grid_)}};
    }

protected:
    std::vector<torch::Tensor> all_parameters() override { return icnn_->parameters(); }

private:
    std::unique_ptr<LogConcaveTarget> target_;
    Icnn icnn_;
    torch::Tensor grid_, grid_f_, target_log_p_;
    QuadratureRule train_rule_;
    torch::Tensor train_nodes_f_;
};

constexpr int64_t kDensityEvalChunk = 4096;  // rows per chunk when a whole split is evaluated

// Mean of f(chunk) over the rows of x, in chunks (bounded memory for big splits).
template <typename F>
double chunked_mean(const torch::Tensor& x, F f) {
    double sum = 0;
    for (int64_t i = 0; i < x.size(0); i += kDensityEvalChunk) {
        throw_if_stopped();
        const auto chunk = x.narrow(0, i, std::min(kDensityEvalChunk, x.size(0) - i));
        sum += f(chunk).to(torch::kFloat64).sum().template item<double>();
    }
    return sum / static_cast<double>(x.size(0));
}

constexpr std::uint64_t kRefineStream =
    0x2EF1;  // proposal refinement draws, apart from the IS draws
constexpr std::uint64_t kAdaptStream = 0xADA97ULL;  // adapted-proposal fits, one seed per fit

// Per-step importance-sample seeds, never the training stream's.
std::uint64_t step_seed(int step) {
    return 0xB16B00B5ULL + 7919ULL * static_cast<uint64_t>(step);
}

// The importance proposal q of icnn-ebm-nd (spec icnn.proposal): the affine-coupling flow fitted
// by maximum likelihood to the training data once (cached under the data cache), sampled from a
// base N(0, proposal_inflate · I); or the moment-matched Gaussian / Student-t of ebm/importance.h.
// The flow can be refined toward the current EBM (icnn.flow_refine_steps Adam steps per training
// step): reverse KL, KL(q_φ ‖ e^{−E}/Z) = E_{z~N(0,I)}[log q_φ(T⁻¹z) + E(T⁻¹z)] + log Z, by the
// reparameterised gradient through the sampling map, with the EBM's weights held fixed (our
// choice of objective: it needs no samples of the EBM; the reference trains its sampler
// alongside the EBM too, luqigroup/lift lift/objectives/ebm_losses.py).
class NdProposal {
public:
    NdProposal(const ExperimentSpec& spec, const Dataset& data) {
        const auto& c = spec.icnn;
        if (c.proposal != "flow") {
            moment_ = Proposal::fit(data.x_train.to(torch::kFloat64), c.proposal, c.proposal_dof,
                                    c.proposal_inflate);
            return;
        }
        base_variance_ = c.proposal_inflate;
        refine_steps_ = c.flow_refine_steps;
        FlowFitOptions fit;
        fit.steps = c.flow_fit_steps;
        fit.seed = spec.task.data_seed;
        fit.cache_dir = data_cache_dir(spec.task);
        auto fitted = fit_flow_proposal(data.x_train,
                                        AffineCouplingFlowOptions(data.input_dim())
                                            .layers(c.flow_layers)
                                            .hidden(c.flow_hidden)
                                            .seed(spec.task.data_seed),
                                        fit);
        flow_ = fitted.flow;
        if (c.proposal_adapt_steps > 0) {
            adapted_ = clone_flow(*flow_);
            adapt_.max_steps = c.proposal_adapt_steps;
            adapt_.batch = c.proposal_adapt_batch;
            adapt_.lr = c.proposal_adapt_lr;
            adapt_.target_ess = c.proposal_adapt_target_ess;
            if (c.proposal_defensive_weight > 0) {
                adapt_.base.weights = {1 - c.proposal_defensive_weight,
                                       c.proposal_defensive_weight};
                adapt_.base.variances = {1.0, c.proposal_defensive_inflate};
            }
            adapt_train_ = c.proposal_adapt_train;
        }
        // The refined flow is the one the training draws come from: the data fit, or with
        // proposal_adapt_train the adapted flow, which then tracks the EBM step by step between
        // its refits (the reference's alternating scheme: a sampler update with every EBM step).
        if (refine_steps_ > 0)
            refiner_ = std::make_unique<torch::optim::Adam>(
                refined().parameters(), torch::optim::AdamOptions(c.flow_refine_lr));
        for (auto& p : flow_->parameters()) p.set_requires_grad(refine_steps_ > 0 && !adapt_train_);
    }
    bool adapts() const { return refiner_ != nullptr; }
    // refine_steps reverse-KL steps toward exp(−energy) (energy: rows → energies, autograd in x).
    template <typename Energy>
    void refine(const Energy& energy, int64_t batch, uint64_t seed) {
        if (!refiner_) return;
        torch::AutoGradMode enable(true);  // also when the caller evaluates under no-grad
        auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
        auto& flow = refined();
        // Draws from the base the flow is sampled with (the adapted flow: N(0, I) as in its fits).
        const double variance = adapt_train_ ? 1.0 : base_variance_;
        for (int k = 0; k < refine_steps_; ++k) {
            const auto z = torch::randn({batch, flow.options().dim()}, gen) * std::sqrt(variance);
            const auto [x, log_det] = flow.decode(z);
            // log q(x) = log N(z) − log_det; log N(z) does not depend on φ.
            const auto loss = (energy(x).to(torch::kFloat32) - log_det).mean();
            // Dropped, not zeroed: the adapted flow's fits may leave gradients that are views.
            for (auto& p : flow.parameters()) p.mutable_grad() = torch::Tensor();
            loss.backward();
            refiner_->step();
        }
    }
    // The proposal adapted to the EBM (icnn.proposal_adapt_steps > 0).
    bool adapts_to_model() const { return !adapted_.is_empty(); }
    // Training draws come from the adapted proposal (icnn.proposal_adapt_train).
    bool trains_on_adapted() const { return adapt_train_; }
    bool adapted_once() const { return adapt_count_ > 0; }
    // Fits the adapted flow to exp(−energy) (warm start: it keeps its previous fit).
    // At most max_steps Adam steps (−1: icnn.proposal_adapt_steps).
    EnergyFit adapt(const std::function<torch::Tensor(const torch::Tensor&)>& energy,
                    int max_steps = -1) {
        EnergyFitOptions o = adapt_;
        if (max_steps >= 0) o.max_steps = max_steps;
        o.seed = kAdaptStream + 0x9E3779B9ULL * static_cast<uint64_t>(adapt_count_++);
        return fit_flow_to_energy(*adapted_, energy, o);
    }
    // The adapted flow's parameters and its fit count (the next fit's seed), for run --resume;
    // the data-fitted flow is refitted (or read from its cache) the same at every start.
    void save_state(StateArchive& a, const std::string& prefix) const {
        if (adapted_.is_empty()) return;
        a.put_tensors(prefix + "adapted", adapted_->parameters());
        a.put_int(prefix + "adapt_count", adapt_count_);
    }
    void load_state(const StateArchive& a, const std::string& prefix) {
        if (adapted_.is_empty()) return;
        a.copy_into(prefix + "adapted", adapted_->parameters());
        adapt_count_ = static_cast<int>(a.integer(prefix + "adapt_count"));
    }
    // m draws (float64) and their log q from the adapted defensive mixture.
    std::pair<torch::Tensor, torch::Tensor> draw_adapted(int64_t m, uint64_t seed) const {
        torch::NoGradGuard no_grad;
        return mixture_sample(*adapted_, m, seed, adapt_.base);
    }
    // m draws (float64) and their log q, from a generator seeded by `seed`: the training draws.
    std::pair<torch::Tensor, torch::Tensor> draw(int64_t m, uint64_t seed) const {
        torch::NoGradGuard no_grad;
        if (adapt_train_) return draw_adapted(m, seed);
        if (flow_) return flow_->sample(m, seed, base_variance_);
        auto x = moment_->sample(m, seed);
        auto lq = moment_->log_prob(x);
        return {x, lq};
    }
    // log q of the rows of x (float64): the proposal's own density, a baseline model of the data.
    torch::Tensor log_prob(const torch::Tensor& x) const {
        torch::NoGradGuard no_grad;
        if (flow_) return flow_->log_prob(x, base_variance_);
        return moment_->log_prob(x.to(torch::kFloat64));
    }

private:
    AffineCouplingFlowImpl& refined() { return adapt_train_ ? *adapted_ : *flow_; }

    std::optional<Proposal> moment_;
    AffineCouplingFlow flow_{nullptr};
    double base_variance_ = 1.0;
    int refine_steps_ = 0;
    std::unique_ptr<torch::optim::Adam> refiner_;
    AffineCouplingFlow adapted_{nullptr};
    EnergyFitOptions adapt_;
    bool adapt_train_ = false;
    int adapt_count_ = 0;
};

// icnn-ebm-nd: NLL = mean E(x) + log Ẑ with log Ẑ = logsumexp_m(−E(x_m) − log q(x_m)) − log M over
// fresh proposal samples every step (docs/methods.md §5.2), q the NdProposal above.
// Every evaluation reports log Ẑ with its standard error and the effective sample size fraction
// of its eval_is_samples draws, and the proposal's own test NLL (q is itself a density model of
// the data: a reference line for the EBM's). TV by Monte Carlo where the target density is
// known: E_{x~p}[max(0, 1 − q(x)/p(x))] over the test samples, with q normalised by the
// evaluation log Ẑ.
class EbmNdModel : public DensityModel {
public:
    EbmNdModel(const ExperimentSpec& spec, const Dataset& data, const std::string& strategy,
               int64_t width)
        : spec_(spec),
          icnn_(icnn_options(spec, data.input_dim(), strategy, width)),
          proposal_(spec, data) {
        if (samples_its_target(spec.task))  // else a data set: no density to compare with
            target_ = make_nd_target(spec.task.target, spec.task.dim, spec.task.data_seed);
        draw_eval_samples();
    }
    void draw_eval_samples() {
        std::tie(eval_samples_, eval_log_q_) =
            proposal_.draw(spec_.icnn.eval_is_samples, /*seed=*/0xE7A1);
        eval_samples_ = eval_samples_.to(torch::kFloat32);
    }
    Icnn icnn() override { return icnn_; }
    std::string resume_blocker() const override {
        if (spec_.icnn.flow_refine_steps > 0)
            return "its importance-sampling proposal is refined at every step "
                   "(icnn.flow_refine_steps), and the refiner's Adam moments are not saved";
        return "";
    }
    // The adapted proposal (icnn.proposal_adapt_steps): its flow, its fit count, and whether a
    // refit is due before the next training step. The training draws are redrawn at the next
    // step and the evaluation draws at the next evaluation, as in an uninterrupted run.
    void save_state(StateArchive& a, const std::string& prefix) const override {
        if (!proposal_.adapts_to_model()) return;
        proposal_.save_state(a, prefix + "proposal.");
        a.put_int(prefix + "refit_due", refit_due_ ? 1 : 0);
        a.put_int(prefix + "train_refits", train_refits_);
    }
    void load_state(const StateArchive& a, const std::string& prefix) override {
        if (!proposal_.adapts_to_model()) return;
        proposal_.load_state(a, prefix + "proposal.");
        refit_due_ = a.integer(prefix + "refit_due") != 0;
        train_refits_ = static_cast<int>(a.integer(prefix + "train_refits"));
        cached_step_ = -1;
    }
    torch::Tensor fresh_batch(int64_t n, std::uint64_t seed) override {
        if (!target_) return {};
        return target_->sample(n, seed).to(torch::kFloat32);
    }
    torch::Tensor nll(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                      int step) override {
        if (step != cached_step_) {
            if (proposal_.trains_on_adapted() && (!proposal_.adapted_once() || refit_due_)) {
                std::vector<torch::Tensor> fixed;
                for (const auto& w : constrained) fixed.push_back(w.detach());
                // The first fit runs the full budget; a refit between evaluations a tenth of it
                // (warm-started, it usually stops at the target ESS well before).
                adapt_to(fixed, proposal_.adapted_once()
                                    ? std::max(1, spec_.icnn.proposal_adapt_steps / 10)
                                    : -1);
                refit_due_ = false;
                ++train_refits_;
            }
            if (proposal_.adapts()) {
                std::vector<torch::Tensor> fixed;
                for (const auto& w : constrained) fixed.push_back(w.detach());
                proposal_.refine(
                    [&](const torch::Tensor& xs) { return icnn_->energy_with_weights(xs, fixed); },
                    spec_.batch_size, step_seed(step) ^ kRefineStream);
            }
            std::tie(step_samples_, step_log_q_) =
                proposal_.draw(spec_.icnn.is_samples, step_seed(step));
            step_samples_ = step_samples_.to(torch::kFloat32);
            cached_step_ = step;
        }
        const auto e_q = icnn_->energy_with_weights(step_samples_, constrained).to(torch::kFloat64);
        const auto e = icnn_->energy_with_weights(x, constrained).to(torch::kFloat64);
        // The EBM moves between evaluations: once the training draws' ESS fraction falls below
        // a fifth of the adaptation's target, the adapted proposal is refitted before the next
        // step.
        if (proposal_.trains_on_adapted() &&
            effective_sample_size(e_q, step_log_q_) / static_cast<double>(e_q.size(0)) <
                spec_.icnn.proposal_adapt_target_ess / 5)
            refit_due_ = true;
        return e.mean() + importance_log_partition(e_q, step_log_q_);
    }
    torch::Tensor batch_term(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                             int /*step*/) override {
        return icnn_->energy_with_weights(x, constrained).to(torch::kFloat64).mean();
    }
    std::map<std::string, double> evaluate(const torch::Tensor& x,
                                           const std::vector<torch::Tensor>& constrained) override {
        std::map<std::string, double> adapted;
        if (proposal_.adapts_to_model()) {
            const auto fit = adapt_to(constrained);
            adapted = {{"proposal_adapt_steps", fit.steps},
                       {"proposal_probe_ess", fit.ess_fraction}};
            if (proposal_.trains_on_adapted()) adapted["proposal_train_refits"] = train_refits_;
            std::tie(eval_samples_, eval_log_q_) =
                proposal_.draw_adapted(spec_.icnn.eval_is_samples, /*seed=*/0xE7A1);
            eval_samples_ = eval_samples_.to(torch::kFloat32);
        } else if (proposal_.adapts()) {
            draw_eval_samples();  // the proposal moved since the last one
        }
        std::vector<torch::Tensor> e_parts;
        for (int64_t i = 0; i < eval_samples_.size(0); i += kDensityEvalChunk) {
            throw_if_stopped();
            e_parts.push_back(
                icnn_
                    ->energy_with_weights(
                        eval_samples_.narrow(
                            0, i, std::min(kDensityEvalChunk, eval_samples_.size(0) - i)),
                        constrained)
                    .to(torch::kFloat64));
        }
        const auto e_q = torch::cat(e_parts);
        const double lz = importance_log_partition(e_q, eval_log_q_).item<double>();
        const auto e_x = icnn_->energy_with_weights(x, constrained).to(torch::kFloat64);
        std::map<std::string, double> out = {
            {"test_loss", e_x.mean().item<double>() + lz},
            {"log_z", lz},
            {"log_z_se", log_partition_standard_error(e_q, eval_log_q_)},
            {"ess_fraction",
             effective_sample_size(e_q, eval_log_q_) / static_cast<double>(e_q.size(0))},
            {"proposal_nll", -chunked_mean(x, [&](const torch::Tensor& chunk) {
                 return proposal_.log_prob(chunk);
             })}};
        out.insert(adapted.begin(), adapted.end());
        if (target_) {
            const auto tv = monte_carlo_tv(target_->log_density(x.to(torch::kFloat64)), -e_x - lz);
            out["tv"] = tv.tv;
            out["tv_se"] = tv.standard_error;
        }
        return out;
    }

protected:
    std::vector<torch::Tensor> all_parameters() override { return icnn_->parameters(); }

private:
    // Fits the adapted proposal to the EBM with these (detached) weights.
    EnergyFit adapt_to(const std::vector<torch::Tensor>& weights, int max_steps = -1) {
        return proposal_.adapt(
            [&](const torch::Tensor& xs) { return icnn_->energy_with_weights(xs, weights); },
            max_steps);
    }

    ExperimentSpec spec_;
    Icnn icnn_;
    NdProposal proposal_;
    std::unique_ptr<NdTarget> target_;
    torch::Tensor eval_samples_, eval_log_q_;
    int cached_step_ = -1;
    torch::Tensor step_samples_, step_log_q_;
    bool refit_due_ = false;
    int train_refits_ = 0;  // training-time refits of the adapted proposal
};

// cpflow-toy, cpflow-tabular: NLL = −log p(x) of the convex potential flow (exact Hessian
// log-det), in nats per sample.
class CpFlowModel : public DensityModel {
public:
    CpFlowModel(const ExperimentSpec& spec, const Dataset& data, const std::string& strategy,
                int64_t width)
        : target_(spec.task.target),
          flow_(CpFlowOptions(data.input_dim())
                    .width(width)
                    .layers(spec.icnn.layers)
                    .strategy(strategy)
                    .scales(spec.icnn.flow_scales)
                    .quadratic(spec.icnn.strong_convexity)
                    .positivity(positivity_options(spec.icnn))) {}
    Icnn icnn() override { return flow_->icnn(); }
    // The reference sweep's targets are sampled afresh (task.fresh_samples); the FFJORD-recipe
    // toys and the tables are data sets.
    torch::Tensor fresh_batch(int64_t n, std::uint64_t seed) override {
        if (target_ == "8gaussians-demo")
            return make_eight_gaussians_demo(n, seed).to(torch::kFloat32);
        if (target_ == "2spirals-demo") return make_two_spirals_demo(n, seed).to(torch::kFloat32);
        return {};
    }
    std::vector<torch::Tensor> extra_parameters() override {
        std::vector<torch::Tensor> out;
        for (const auto& item : flow_->named_parameters(/*recurse=*/false))
            out.push_back(item.value());  // w0, w1
        return out;
    }
    torch::Tensor nll(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                      int /*step*/) override {
        return -flow_->log_prob_with_weights(x, constrained).to(torch::kFloat64).mean();
    }
    std::map<std::string, double> evaluate(const torch::Tensor& x,
                                           const std::vector<torch::Tensor>& constrained) override {
        const double nll = chunked_mean(x, [&](const torch::Tensor& chunk) {
            return -flow_->log_prob_with_weights(chunk, constrained);
        });
        return {{"test_loss", nll}};
    }

protected:
    std::vector<torch::Tensor> all_parameters() override { return flow_->parameters(); }

private:
    std::string target_;
    CpFlow flow_;
};

}  // namespace

std::unique_ptr<DensityModel> make_density_model(const ExperimentSpec& spec, const Dataset& data,
                                                 const std::string& strategy, int64_t width) {
    if (spec.task.kind == "icnn-ebm-1d") return std::make_unique<Ebm1dModel>(spec, strategy, width);
    if (spec.task.kind == "icnn-ebm-nd")
        return std::make_unique<EbmNdModel>(spec, data, strategy, width);
    if (spec.task.kind == "cpflow-toy" || spec.task.kind == "cpflow-tabular")
        return std::make_unique<CpFlowModel>(spec, data, strategy, width);
    throw std::invalid_argument("no density model for task '" + spec.task.kind + "' yet");
}

}  // namespace liftlab
