#include "training/dfiv_trainer.h"

#include <cmath>
#include <stdexcept>

#include "core/stopwatch.h"
#include "lastlayer/proximal_solve.h"
#include "training/optimizer_factory.h"

namespace liftlab {

namespace {

// Columns of the dfiv-demand data rows (engine/data/dataset.cpp).
constexpr int64_t kColumns = 4;
constexpr int64_t kPrice = 0, kTime = 1, kStore = 2, kCost = 3;
// The instrument net gets twice the feature width of the other two: its features must predict
// all d1 treatment features from a 3-d instrument (DFIV's demand nets: 32 instrument features).
constexpr int64_t kInstrumentWidthFactor = 2;
// Stage-2 batches are drawn by their own sampler; this constant decorrelates its seed.
constexpr std::uint64_t kStage2SeedMix = 0x9E3779B97F4A7C15ULL;
// Rows per chunk when a whole half goes through the nets (the final re-estimation).
constexpr int64_t kDfivChunk = 4096;

MlpBackbone make_net(const BackboneSpec& spec, int64_t input_dim, int64_t feature_dim) {
    std::vector<int64_t> hidden(spec.hidden.begin(), spec.hidden.end());
    return MlpBackbone(
        MlpBackboneOptions(input_dim, feature_dim).hidden(hidden).activation(spec.activation));
}

std::vector<torch::Tensor> params_of(std::initializer_list<MlpBackbone> nets) {
    std::vector<torch::Tensor> out;
    for (const auto& net : nets)
        for (auto& p : net->parameters()) out.push_back(p);
    return out;
}

bool all_finite(const std::vector<torch::Tensor>& ts) {
    for (const auto& t : ts)
        if (t.defined() && !torch::isfinite(t).all().item<bool>()) return false;
    return true;
}

}  // namespace

torch::Tensor dfiv_outer_features(const torch::Tensor& a, const torch::Tensor& b) {
    const auto at = with_bias_column(a), bt = with_bias_column(b.to(a.scalar_type()));
    return torch::einsum("ni,nj->nij", {at, bt}).reshape({a.size(0), -1});
}

DfivTrainer::DfivTrainer(const ExperimentSpec& spec, const MethodSpec& method, const Dataset& data,
                         std::uint64_t seed)
    : proximal_(method_info(method.name).dfiv_proximal),
      refit_(method_info(method.name).dfiv_refit),
      lambda_(method.lambda),
      lambda_scale_(method.lambda_scale),
      total_steps_(spec.steps),
      n1_(data.n_train() / 2),
      n2_(data.n_train() - data.n_train() / 2),
      // BatchSampler caps the batch at the half's size.
      sampler1_(data.n_train() / 2, spec.batch_size, seed),
      sampler2_(data.n_train() - data.n_train() / 2, spec.batch_size, seed ^ kStage2SeedMix) {
    if (method_info(method.name).family != MethodFamily::Dfiv)
        throw std::invalid_argument("DfivTrainer: unknown method '" + method.name + "'");
    if (data.x_train.dim() != 2 || data.x_train.size(1) != kColumns || data.output_dim() != 1 ||
        data.x_test.dim() != 2 || data.x_test.size(1) != kColumns)
        throw std::invalid_argument(
            "DfivTrainer: needs dfiv-demand rows [P, t, s, C] and a scalar outcome");
    if (n1_ < 2) throw std::invalid_argument("DfivTrainer: needs at least 4 training rows");

    // Standardise every input column and Y with training-set statistics: P ≈ 25 ± 3, s ∈ 1..7
    // and Y spans hundreds, which would otherwise dominate the nets' first layers and the
    // ridge scale. Predictions are mapped back (f̂ = mean + scale · ŷ), so every reported loss
    // is in the original Y units.
    const auto x = data.x_train.to(torch::kFloat32);
    device_ = x.device();
    x_mean_ = x.mean(0, /*keepdim=*/true);
    const auto sd = x.std(0, /*unbiased=*/false, /*keepdim=*/true);
    x_scale_ = torch::where(sd > 0, sd, torch::ones_like(sd));
    const auto y = data.y_train.to(torch::kFloat64);
    y_mean_ = y.mean().item<double>();
    const double y_sd = y.std(/*unbiased=*/false).item<double>();
    y_scale_ = y_sd > 0 ? y_sd : 1.0;

    const auto xs = standardize(x);
    const auto ys = (y - y_mean_) / y_scale_;  // float64: the solves see it unrounded
    const auto half1 = xs.narrow(0, 0, n1_), half2 = xs.narrow(0, n1_, n2_);
    p1_ = treatment_of(half1).contiguous();
    z1_ = instrument_of(half1).contiguous();
    z2_ = instrument_of(half2).contiguous();
    w2_ = covariate_of(half2).contiguous();
    y2_ = ys.narrow(0, n1_, n2_).contiguous();
    x_test_ = data.x_test;
    y_test_ = data.y_test;

    // Same seed, same initialisation of the three nets for every dfiv* method of a run.
    torch::manual_seed(seed);
    const int64_t d = spec.backbone.feature_dim;
    treatment_net_ = make_net(spec.backbone, /*input_dim=*/1, d);
    instrument_net_ = make_net(spec.backbone, /*input_dim=*/3, kInstrumentWidthFactor * d);
    covariate_net_ = make_net(spec.backbone, /*input_dim=*/2, d);
    for (auto net : {treatment_net_, instrument_net_, covariate_net_}) net->to(device_);
    const double lr = method.lr > 0 ? method.lr : spec.optimizer.lr;
    instrument_optimizer_ = make_optimizer(spec.optimizer, lr, params_of({instrument_net_}));
    outcome_optimizer_ =
        make_optimizer(spec.optimizer, lr, params_of({treatment_net_, covariate_net_}));
}

torch::Tensor DfivTrainer::standardize(const torch::Tensor& x) const {
    return (x.to(torch::kFloat32) - x_mean_) / x_scale_;
}
torch::Tensor DfivTrainer::treatment_of(const torch::Tensor& xs) {
    return xs.narrow(1, kPrice, 1);
}
torch::Tensor DfivTrainer::instrument_of(const torch::Tensor& xs) {
    return xs.index_select(1, torch::tensor({kCost, kTime, kStore}, torch::kLong).to(xs.device()));
}
torch::Tensor DfivTrainer::covariate_of(const torch::Tensor& xs) {
    return xs.narrow(1, kTime, 2);
}

std::pair<torch::Tensor, torch::Tensor> DfivTrainer::stage1_smoother(
    const torch::Tensor& phi_tilde) {
    const auto t0 = Clock::now();
    torch::NoGradGuard no_grad;
    const int64_t n = phi_tilde.size(0), d1 = treatment_net_->feature_dim();
    const auto f64 = phi_tilde.options().dtype(torch::kFloat64);
    std::pair<torch::Tensor, torch::Tensor> out;
    if (proximal_ && v_.defined()) {
        // One solve for both: targets [I, 0] with prior [0, V_{t−1}] give [A, c].
        const auto targets = torch::cat({torch::eye(n, f64), torch::zeros({n, d1}, f64)}, 1);
        const auto prior = torch::cat({torch::zeros({phi_tilde.size(1), n}, f64), v_}, 1);
        const auto w = solve_proximal(phi_tilde, targets, stage_lambda(n), prior).w;
        out = {w.narrow(1, 0, n), w.narrow(1, n, d1)};
    } else {
        out = {solve_proximal(phi_tilde, torch::eye(n, f64), stage_lambda(n)).w, {}};
    }
    solve_seconds_ += seconds_since(t0);
    return out;
}

// One stage's closed form (ridge on the batch, or proximal toward `previous` for dfiv-prox),
// timed into solve_seconds_.
torch::Tensor DfivTrainer::solve_stage(const torch::Tensor& features, const torch::Tensor& targets,
                                       const torch::Tensor& previous) {
    const auto t0 = Clock::now();
    const auto prior = proximal_ ? previous : torch::Tensor();
    auto w = solve_proximal(features, targets, stage_lambda(features.size(0)), prior).w;
    solve_seconds_ += seconds_since(t0);
    return w;
}

double DfivTrainer::step() {
    const auto t0 = Clock::now();
    ++steps_;
    const auto i1 = sampler1_.next().to(device_), i2 = sampler2_.next().to(device_);
    const auto p1 = p1_.index_select(0, i1), z1 = z1_.index_select(0, i1);
    const auto z2 = z2_.index_select(0, i2), w2 = w2_.index_select(0, i2);
    const auto y2 = y2_.index_select(0, i2);

    // (a) Instrument net ξ, θ fixed. V = V*(ξ) is the minimiser of the very objective we descend,
    // so by the envelope theorem (docs/methods.md §1.1) ∇ξ L1*(ξ) = ∇ξ L1(V, ξ) at V held fixed —
    // the same gradient the original DFIV gets by differentiating through the solve.
    {
        torch::Tensor psi1;
        {
            torch::NoGradGuard no_grad;
            psi1 = treatment_net_->forward(p1);
        }
        instrument_optimizer_->zero_grad();
        const auto phi1 = with_bias_column(instrument_net_->forward(z1));
        const auto v = solve_stage(phi1.detach(), psi1, v_).to(torch::kFloat32);
        auto loss1 = torch::mse_loss(phi1.matmul(v), psi1);
        loss1.backward();
        instrument_optimizer_->step();
    }

    // (b) Treatment net θ and covariate net η, ξ fixed.
    // u: the minimiser of the stage-2 objective being descended, so (envelope theorem) it is
    // solved under no-grad and held fixed — exact, no back-propagation through the solve.
    // V: NOT held fixed. V is the minimiser of the stage-1 objective, not of this one, so the
    // envelope theorem does not cover it; and θ enters the stage-2 loss only through V (the
    // stage-1 targets ψ_θ(P1)), so a frozen V would give θ no gradient at all. With ξ fixed,
    // V(θ) = A ψ_θ(P1) + c is linear in θ's output with a constant smoother A (solved once,
    // under no-grad): the gradient flows through a matmul, never through the factorisation.
    // This is the gradient the original DFIV computes.
    outcome_optimizer_->zero_grad();
    torch::Tensor phi1, phi2;
    {
        torch::NoGradGuard no_grad;
        phi1 = with_bias_column(instrument_net_->forward(z1));
        phi2 = with_bias_column(instrument_net_->forward(z2));
    }
    const auto [smoother, offset] = stage1_smoother(phi1);
    auto v = smoother.to(torch::kFloat32).matmul(treatment_net_->forward(p1));
    if (offset.defined()) v = v + offset.to(torch::kFloat32);
    const auto features = dfiv_outer_features(phi2.matmul(v), covariate_net_->forward(w2));
    const auto u = solve_stage(features.detach(), y2, u_);
    auto loss2 = torch::mse_loss(features.matmul(u.to(torch::kFloat32)), y2.to(torch::kFloat32));
    loss2.backward();
    outcome_optimizer_->step();
    v_ = v.detach().to(torch::kFloat64);
    u_ = u;

    // dfiv: V and u on the full halves with the final features. Counted in the step time:
    // it is the cost the proximal variant removes.
    if (refit_ && steps_ == total_steps_) refit_full_data();
    step_seconds_ += seconds_since(t0);
    return loss2.item<double>() * y_scale_ * y_scale_;
}

void DfivTrainer::refit_full_data() {
    const auto t0 = Clock::now();
    torch::NoGradGuard no_grad;
    // Ridge statistics accumulated chunk by chunk (λ = lambda_scale · half rows).
    GramStatistics stage1;
    for (int64_t start = 0; start < n1_; start += kDfivChunk) {
        const int64_t len = std::min(kDfivChunk, n1_ - start);
        stage1.add(with_bias_column(instrument_net_->forward(z1_.narrow(0, start, len))),
                   treatment_net_->forward(p1_.narrow(0, start, len)));
    }
    v_ = solve_statistics(stage1, lambda_scale_ * n1_);
    GramStatistics stage2;
    for (int64_t start = 0; start < n2_; start += kDfivChunk) {
        const int64_t len = std::min(kDfivChunk, n2_ - start);
        const auto psi_hat = with_bias_column(instrument_net_->forward(z2_.narrow(0, start, len)))
                                 .to(torch::kFloat64)
                                 .matmul(v_);
        stage2.add(dfiv_outer_features(psi_hat, covariate_net_->forward(w2_.narrow(0, start, len))),
                   y2_.narrow(0, start, len));
    }
    u_ = solve_statistics(stage2, lambda_scale_ * n2_);
    solve_seconds_ += seconds_since(t0);
}

DfivTrainer::StageWeights DfivTrainer::solve_stages(const torch::Tensor& x1,
                                                    const torch::Tensor& x2,
                                                    const torch::Tensor& y2) {
    torch::NoGradGuard no_grad;
    const double seconds = solve_seconds_;  // a query, not training: leave the timers alone
    const auto s1 = standardize(x1), s2 = standardize(x2);
    StageWeights w;
    w.v = solve_stage(with_bias_column(instrument_net_->forward(instrument_of(s1))),
                      treatment_net_->forward(treatment_of(s1)), v_);
    const auto psi_hat = with_bias_column(instrument_net_->forward(instrument_of(s2)))
                             .to(torch::kFloat64)
                             .matmul(w.v);
    const auto ys = (y2.to(torch::kFloat64) - y_mean_) / y_scale_;
    w.u = solve_stage(dfiv_outer_features(psi_hat, covariate_net_->forward(covariate_of(s2))), ys,
                      u_);
    solve_seconds_ = seconds;
    return w;
}

torch::Tensor DfivTrainer::treatment_features(const torch::Tensor& x) {
    torch::NoGradGuard no_grad;
    return treatment_net_->forward(treatment_of(standardize(x)));
}
torch::Tensor DfivTrainer::instrument_features(const torch::Tensor& x) {
    torch::NoGradGuard no_grad;
    return instrument_net_->forward(instrument_of(standardize(x)));
}
torch::Tensor DfivTrainer::covariate_features(const torch::Tensor& x) {
    torch::NoGradGuard no_grad;
    return covariate_net_->forward(covariate_of(standardize(x)));
}

std::vector<FeatureProbe::NamedFeatures> DfivTrainer::probe_features(const torch::Tensor& x) {
    torch::NoGradGuard no_grad;
    const int64_t n = std::min<int64_t>(x.size(0), n1_);
    return {{"instrument", instrument_net_->forward(z1_.narrow(0, 0, n))},
            {"treatment", treatment_net_->forward(p1_.narrow(0, 0, n))}};
}

torch::Tensor DfivTrainer::predict(const torch::Tensor& x) {
    torch::NoGradGuard no_grad;
    if (!u_.defined())
        return torch::full({x.size(0), 1}, y_mean_, x.options().dtype(torch::kFloat64));
    // The structural function uses the true treatment features ψ(p), not the predicted ψ̂(Z).
    const auto features =
        dfiv_outer_features(treatment_features(x).to(torch::kFloat64), covariate_features(x));
    return y_mean_ + y_scale_ * features.matmul(u_);
}

std::map<std::string, double> DfivTrainer::evaluate_test() {
    const auto err = predict(x_test_) - y_test_.to(torch::kFloat64);
    return {{"test_loss", err.pow(2).mean().item<double>()}};
}

double DfivTrainer::train_set_loss() {
    if (!u_.defined()) return NAN;
    torch::NoGradGuard no_grad;
    double sq_sum = 0;
    for (int64_t start = 0; start < n2_; start += kDfivChunk) {
        const int64_t len = std::min(kDfivChunk, n2_ - start);
        const auto psi_hat = with_bias_column(instrument_net_->forward(z2_.narrow(0, start, len)))
                                 .to(torch::kFloat64)
                                 .matmul(v_);
        const auto pred =
            dfiv_outer_features(psi_hat, covariate_net_->forward(w2_.narrow(0, start, len)))
                .matmul(u_);
        sq_sum += (pred - y2_.narrow(0, start, len)).pow(2).sum().item<double>();
    }
    return sq_sum / static_cast<double>(n2_) * y_scale_ * y_scale_;
}

bool DfivTrainer::parameters_finite() {
    return all_finite(params_of({treatment_net_, instrument_net_, covariate_net_})) &&
           all_finite({v_, u_});
}

}  // namespace liftlab
