// A learned importance-sampling proposal for n-D log Z (docs/methods.md §5.4,
// §5.5): a RealNVP-style affine-coupling normalising flow.
//
// Map (data x → noise z), read left to right:
//   standardise  u = (x − loc) ⊙ exp(−log_scale)          loc, log_scale from the data, trained
//   L couplings  u ← u[perm_l];  a = u[:d₁], b = u[d₁:] (d₁ = ⌊d/2⌋)
//                (s, t) = MLP_l(a);  s ← s_max · tanh(s / s_max)
//                b ← b ⊙ exp(s) + t
//   z = u,       log q(x) = log N(z; 0, τ² I) + Σ log|det ∂z/∂x|
//                         = log N(z; 0, τ² I) − Σ log_scale + Σ_l Σ s_l.
// Each MLP is d₁ → hidden → hidden → 2(d − d₁) with ReLU; its last layer starts at N(0, 0.01²)
// weights and zero bias, so a new flow is the standardising affine map (the reference's
// conditional sampler, luqigroup/lift lift/models/conditional_sampler_flow.py, starts its
// couplings the same way; it clamps s to ±5, we bound it smoothly with tanh so its gradient
// never vanishes at the bound). Permutations are seeded random, like the reference's.
// Sampling inverts the couplings from z ~ N(0, τ² I); τ² > 1 (the spec's proposal_inflate)
// widens the proposal so it covers a model a little wider than the data.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace liftlab {

struct AffineCouplingFlowOptions {
    explicit AffineCouplingFlowOptions(int64_t dim) : dim_(dim) {}
    TORCH_ARG(int64_t, dim);
    TORCH_ARG(int64_t, layers) = 8;          // coupling layers
    TORCH_ARG(int64_t, hidden) = 128;        // width of each coupling MLP
    TORCH_ARG(double, max_log_scale) = 3.0;  // s_max: per-layer |log scale| bound
    TORCH_ARG(uint64_t, seed) = 0;           // initial weights and permutations
};

class AffineCouplingFlowImpl : public torch::nn::Module {
public:
    // Throws std::invalid_argument naming a bad option (dim ≥ 2, layers ≥ 1, hidden ≥ 1,
    // max_log_scale > 0).
    explicit AffineCouplingFlowImpl(const AffineCouplingFlowOptions& options);

    const AffineCouplingFlowOptions& options() const { return options_; }
    // Sets the standardising layer to the per-coordinate mean and log standard deviation of the
    // rows of `x` (a data-dependent init; the couplings stay the identity).
    void initialise_from(const torch::Tensor& x);
    // z = T(x) and log|det ∂z/∂x| per row (autograd through the parameters).
    std::pair<torch::Tensor, torch::Tensor> encode(const torch::Tensor& x) const;
    // x = T⁻¹(z) and log|det ∂x/∂z| per row.
    std::pair<torch::Tensor, torch::Tensor> decode(const torch::Tensor& z) const;
    // log q(x) with base N(0, base_variance · I), float64, one value per row of x (n × dim).
    torch::Tensor log_prob(const torch::Tensor& x, double base_variance = 1.0) const;
    // m draws and their log q (both float64), from a generator seeded by `seed`.
    std::pair<torch::Tensor, torch::Tensor> sample(int64_t m, uint64_t seed,
                                                   double base_variance = 1.0) const;

private:
    // (s, t) of coupling l for the first block a.
    std::pair<torch::Tensor, torch::Tensor> coupling(size_t l, const torch::Tensor& a) const;

    AffineCouplingFlowOptions options_;
    int64_t d1_ = 0;
    torch::Tensor loc_, log_scale_;
    std::vector<torch::Tensor> perms_, inverse_perms_;
    struct Mlp {
        torch::Tensor w1, b1, w2, b2, w3, b3;
    };
    std::vector<Mlp> mlps_;
};
TORCH_MODULE(AffineCouplingFlow);

struct FlowFitOptions {
    int steps = 3000;       // Adam steps of maximum likelihood
    int batch = 512;        // rows per step (capped at the number of rows)
    double lr = 1e-3;       // Adam step size, cosine-decayed to 0 over `steps`
    uint64_t seed = 0;      // minibatch order (the flow's own seed is in its options)
    std::string cache_dir;  // empty: no cache
};

struct FlowFit {
    AffineCouplingFlow flow{nullptr};
    double train_nll = 0.0;  // mean −log q over the fitting rows at the end (nats)
    bool from_cache = false;
};

// Fits a flow of `flow_options` to the rows of `data` (n × dim, n ≥ 2) by maximum likelihood, or
// loads the fitted weights from <cache_dir>/flow-proposal-<hash>.pt, keyed by the data's bytes,
// both options and a format version (a stale or foreign file is a miss, never wrong weights).
// The result is a deterministic function of the inputs for a fixed LibTorch thread count.
// Throws std::invalid_argument for bad shapes or options, naming them.
FlowFit fit_flow_proposal(const torch::Tensor& data, const AffineCouplingFlowOptions& flow_options,
                          const FlowFitOptions& fit_options);

// A defensive scale mixture pushed through a flow: q(x) = Σ_k α_k N(T(x); 0, τ_k² I) |det ∂T/∂x|,
// i.e. the same flow on a base that is a mixture of isotropic Gaussians (weights α_k > 0 summing
// to 1, variances τ_k² > 0). With one wide component (τ² > 1, small α) the importance weights
// e^{−E}/q are at most e^{−E}/(α q_wide), so a proposal fitted tightly to a model stays unbiased
// with bounded weights where it is too narrow (defensive importance sampling, Hesterberg 1995).
struct BaseMixture {
    std::vector<double> weights{1.0};
    std::vector<double> variances{1.0};
};
// log q of the rows of x (float64, one per row); throws std::invalid_argument for a bad mixture.
torch::Tensor mixture_log_prob(const AffineCouplingFlowImpl& flow, const torch::Tensor& x,
                               const BaseMixture& base);
// m draws (float64) and their log q (float64), each draw's component chosen with probability α_k,
// from a generator seeded by `seed`.
std::pair<torch::Tensor, torch::Tensor> mixture_sample(const AffineCouplingFlowImpl& flow,
                                                       int64_t m, uint64_t seed,
                                                       const BaseMixture& base);

// Fitting a flow to an unnormalised density p ∝ exp(−E) (a trained EBM) rather than to data:
// Adam on the reverse KL, KL(q_φ ‖ p) = E_{ε~N(0,τ²I)}[E(T⁻¹ε) − log|det ∂T⁻¹/∂ε|] + log Z + const,
// by the reparameterised gradient through the sampling map (only φ moves; the energy's own
// parameters are not touched — the gradient is taken for φ alone). log-concave targets are
// unimodal, where the mode-seeking reverse KL is the natural objective. Every `check_every` steps
// (and before the first) the Kish ESS fraction of `probe_samples` fresh draws from the mixture
// `base` (the proposal that is actually used) is measured; the flow with the best probe ESS is
// kept, and the fit stops once it reaches `target_ess`. Step sizes are cosine-decayed from `lr`
// to lr/10 over max_steps.
struct EnergyFitOptions {
    int max_steps = 1000;  // Adam steps at most (0: only the probe)
    int batch = 256;       // reparameterised draws per step
    double lr = 1e-3;      // Adam step size (decayed to lr/10)
    int check_every = 50;  // steps between probe-ESS checks
    int64_t probe_samples = 4096;
    double target_ess = 0.5;     // stop once the probe ESS fraction reaches this (> 1: never)
    double base_variance = 1.0;  // τ² of the reparameterised draws
    BaseMixture base;            // the proposal whose ESS is probed
    uint64_t seed = 0;           // draws of the steps and the probes
};
struct EnergyFit {
    int steps = 0;                  // Adam steps taken
    double start_ess_fraction = 0;  // probe ESS fraction before the first step
    double ess_fraction = 0;        // probe ESS fraction of the kept flow
};
// `energy` maps float32 rows (n × dim, may require grad) to their energies (n), differentiable in
// the rows. Modifies `flow` in place (its parameters must require grad).
EnergyFit fit_flow_to_energy(AffineCouplingFlowImpl& flow,
                             const std::function<torch::Tensor(const torch::Tensor&)>& energy,
                             const EnergyFitOptions& options);

// A new flow with the same options (so the same permutations) and a copy of `flow`'s parameters.
AffineCouplingFlow clone_flow(const AffineCouplingFlowImpl& flow);

}  // namespace liftlab
