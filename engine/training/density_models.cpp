#include "training/density_models.h"

#include <stdexcept>

#include "ebm/importance.h"
#include "ebm/log_concave_targets.h"
#include "ebm/nd_targets.h"
#include "ebm/quadrature.h"
#include "flows/cp_flow.h"

namespace liftlab {

std::vector<torch::Tensor> DensityModel::parameters() {
    std::vector<torch::Tensor> out;
    for (const auto& p : all_parameters())
        if (p.requires_grad()) out.push_back(p);
    return out;
}

namespace {

IcnnOptions icnn_options(const ExperimentSpec& spec, int64_t dim, const std::string& strategy,
                         int64_t width) {
    return IcnnOptions(dim).width(width).layers(spec.icnn.layers).strategy(strategy);
}

// icnn-ebm-1d: NLL = mean E(x) + log Z. The reported log Z and TV use the trapezoid rule on the
// target's range (METHODS.md: 8000 points); the training log Z uses composite Gauss–Legendre
// on icnn.train_quadrature_points nodes (or the same trapezoid grid when 0), which agrees with
// it to ~1e-6 nats on smooth energies at a fraction of the ICNN evaluations.
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
    torch::Tensor nll(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                      int /*step*/) override {
        const auto e = icnn_->energy_with_weights(x, constrained).to(torch::kFloat64);
        return e.mean() + log_z(constrained);
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

constexpr int64_t kEvalChunk = 4096;  // rows per chunk when a whole split is evaluated

// Mean of f(chunk) over the rows of x, in chunks (bounded memory for big splits).
template <typename F>
double chunked_mean(const torch::Tensor& x, F f) {
    double sum = 0;
    for (int64_t i = 0; i < x.size(0); i += kEvalChunk) {
        const auto chunk = x.narrow(0, i, std::min(kEvalChunk, x.size(0) - i));
        sum += f(chunk).to(torch::kFloat64).sum().template item<double>();
    }
    return sum / static_cast<double>(x.size(0));
}

// Per-step importance-sample seeds, never the training stream's.
std::uint64_t step_seed(int step) {
    return 0xB16B00B5ULL + 7919ULL * static_cast<uint64_t>(step);
}

// icnn-ebm-nd: NLL = mean E(x) + log Ẑ with log Ẑ = logsumexp_m(−E(x_m) − log q(x_m)) − log M over
// fresh proposal samples every step (METHODS.md "Log-concave EBMs, n-D"). The proposal q is a
// moment-matched Gaussian or Student-t fitted to the training data (covariance inflated by
// icnn.proposal_inflate) — the documented first version instead of a normalising-flow proposal.
// TV by Monte Carlo where the target density is known: E_{x~p}[max(0, 1 − q(x)/p(x))] over the
// test samples, with q normalised by the evaluation log Ẑ.
class EbmNdModel : public DensityModel {
public:
    EbmNdModel(const ExperimentSpec& spec, const Dataset& data, const std::string& strategy,
               int64_t width)
        : spec_(spec),
          icnn_(icnn_options(spec, data.input_dim(), strategy, width)),
          proposal_(Proposal::fit(data.x_train.to(torch::kFloat64), spec.icnn.proposal,
                                  spec.icnn.proposal_dof, spec.icnn.proposal_inflate)) {
        if (spec.task.target != "fmnist-latents")
            target_ = make_nd_target(spec.task.target, spec.task.dim, spec.task.data_seed);
        eval_samples_ = proposal_.sample(spec.icnn.eval_is_samples, /*seed=*/0xE7A1);
        eval_log_q_ = proposal_.log_prob(eval_samples_);
        eval_samples_ = eval_samples_.to(torch::kFloat32);
    }
    Icnn icnn() override { return icnn_; }
    torch::Tensor fresh_batch(int64_t n, std::uint64_t seed) override {
        if (!target_) return {};
        return target_->sample(n, seed).to(torch::kFloat32);
    }
    torch::Tensor nll(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                      int step) override {
        if (step != cached_step_) {
            const auto samples = proposal_.sample(spec_.icnn.is_samples, step_seed(step));
            step_log_q_ = proposal_.log_prob(samples);
            step_samples_ = samples.to(torch::kFloat32);
            cached_step_ = step;
        }
        const auto e_q = icnn_->energy_with_weights(step_samples_, constrained).to(torch::kFloat64);
        const auto e = icnn_->energy_with_weights(x, constrained).to(torch::kFloat64);
        return e.mean() + importance_log_partition(e_q, step_log_q_);
    }
    torch::Tensor batch_term(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                             int /*step*/) override {
        return icnn_->energy_with_weights(x, constrained).to(torch::kFloat64).mean();
    }
    std::map<std::string, double> evaluate(const torch::Tensor& x,
                                           const std::vector<torch::Tensor>& constrained) override {
        std::vector<torch::Tensor> e_parts;
        for (int64_t i = 0; i < eval_samples_.size(0); i += kEvalChunk)
            e_parts.push_back(
                icnn_
                    ->energy_with_weights(
                        eval_samples_.narrow(0, i, std::min(kEvalChunk, eval_samples_.size(0) - i)),
                        constrained)
                    .to(torch::kFloat64));
        const auto e_q = torch::cat(e_parts);
        const double lz = importance_log_partition(e_q, eval_log_q_).item<double>();
        const auto e_x = icnn_->energy_with_weights(x, constrained).to(torch::kFloat64);
        std::map<std::string, double> out = {
            {"test_loss", e_x.mean().item<double>() + lz},
            {"log_z", lz},
            {"log_z_se", log_partition_standard_error(e_q, eval_log_q_)},
            {"ess_fraction",
             effective_sample_size(e_q, eval_log_q_) / static_cast<double>(e_q.size(0))}};
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
    ExperimentSpec spec_;
    Icnn icnn_;
    Proposal proposal_;
    std::unique_ptr<NdTarget> target_;
    torch::Tensor eval_samples_, eval_log_q_;
    int cached_step_ = -1;
    torch::Tensor step_samples_, step_log_q_;
};

// cpflow-toy, cpflow-tabular: NLL = −log p(x) of the convex potential flow (exact Hessian
// log-det), in nats per sample.
class CpFlowModel : public DensityModel {
public:
    CpFlowModel(const ExperimentSpec& spec, const Dataset& data, const std::string& strategy,
                int64_t width)
        : flow_(CpFlowOptions(data.input_dim())
                    .width(width)
                    .layers(spec.icnn.layers)
                    .strategy(strategy)) {}
    Icnn icnn() override { return flow_->icnn(); }
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
