// CP-Flow's published toy-density recipes (Huang et al., ICLR 2021, `train_toy.py`, as
// luqigroup/lift `lift/baselines/cpflow_toy.py` rebuilds them for its
// `configs/experiments_cpflow_toy_published.json`), with three positivity constructions of the
// same network: `softplus` (the published one), `pgd` and `lifter`. Read for facts; our code.
//
// Recipe A (`train_toy.py`'s defaults, blocks = 1): x → y = ActNorm(x) → f = ∇_y F(y);
// recipe B (the paper's appendix table, blocks > 1): ActNorm, block, ActNorm, …, block, ActNorm —
// blocks + 1 ActNorms interleaved with the convex blocks, each block's input the previous
// ActNorm's output. log p(x) = log N(z; 0, e^{plogv} I) + Σ log s (every ActNorm) + Σ log det
// ∇²F_k (every block), z the last layer's output.
//   ActNorm: y = (x + b) ⊙ s, s = exp(logs) + 0.001, b and logs initialised from the first batch
//            (b = −mean, logs = −log(sd + 10⁻⁶)) then trained; its log-det is Σ log s.
//   F_k(y) = softplus(w1) · ICNN3(y) + softplus(w0) · ‖y‖²/2, w0 = softplus⁻¹(1) and w1 = 0 at
//   init; w0 is trained with one block and frozen with several (upstream's trainable_w0 rule).
//   The prior's variance is e^{plogv}, upstream's plogv = 2 for one block and 0 for several; its
//   log-density keeps upstream's 10⁻⁵ in the denominator: −f²/(2e^{plogv} + 10⁻⁵) − plogv/2 −
//   ½ log 2π per coordinate. log det ∇²F_k by the closed-form 2×2 determinant (the reference's
//   exact2x2 path; dim must be 2); non-positive determinants are counted (a convex F never has
//   one) and clamped at 10⁻³⁰⁰.
// ICNN3 (input-augmented; h = hidden units, L = depth):
//   z = σ_s(W₀ y + b₀)                               (h wide; σ_s(u) = σ(u) − u/2)
//   repeat L − 1 times:
//     z' = σ(ActNorm_l(P(W̃_l) z / h + b_l + Wx_l y + c_l))     (h/2 wide)
//     z  = [z', σ_s(Wx2_l y + c2_l)]                               (h wide)
//   ICNN3(y) = ActNorm_L(P(W̃_L) z / h + Wx_L y)      (scalar; ActNorm_L's shift frozen after its
//   data init) σ(u) = g(u) − g(0) with the gaussian softplus g(u) = (k u erf(u/√2) + exp(−u²/2) + k
//   u)/(2k), k = √(π/2) (upstream `gaussian_softplus` with `zero_softplus`); the ActNorms inside
//   the ICNN carry no log-det. Every Linear starts at U(±1/√fan_in) for weight and bias (PyTorch's
//   default). The constrained weights are the W̃ (the `PosLinear` raw weights); their map P is
//     softplus: P = softplus(W̃), W̃ a parameter (published);
//     pgd:      P = W̃, W̃ a parameter started at softplus(W̃_published) and clamped at 0 after
//               every optimizer step;
//     lifter:   P = softplus(W̃) with W̃ = b + Θ_E h_φ(Y) emitted from the detached block input Y
//               of a conditioning batch (each block its own body and readouts, and its own
//               input: past the first block, the conditioning batch as it enters that block): h_φ a
//               DeepSets body d → 64 → 64 → 96 (ReLU after every Linear), mean-pooled and
//               standardised over its 96 entries, one Linear readout 96 → numel per W̃ with weight
//               U(±1/√96) and bias (the slack b) 0 (the published config's readout_bias_init). Only
//               the W̃ are emitted; every other parameter, the ActNorms included, is trained
//               directly, as in the reference. With readout_fanin_scale (the reference's μP output
//               rule, which its CP-Flow figures use) the emission is W̃ = (Θ_E h)/96 + b with Θ_E
//               started N(0, 1), so one Adam step moves W̃ by about the learning rate, as for a
//               directly trained weight.
// All three draw the shared parameters from one generator seeded by `seed`, in the same order
// (every block's ICNN first, then the lifter's bodies and readouts), so at one seed they start
// from the same network. Everything is float64, like upstream.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "methods/method_registry.h"

namespace liftlab {

struct PublishedCpFlowOptions {
    explicit PublishedCpFlowOptions(int64_t dim) : dim_(dim) {}
    TORCH_ARG(int64_t, dim);
    TORCH_ARG(int64_t, hidden) = 32;  // dimh
    TORCH_ARG(int64_t, depth) = 20;   // num_hidden_layers
    TORCH_ARG(int64_t, blocks) = 1;   // nblocks: 1 is recipe A, the appendix table's 5 recipe B
    // A strategy offered for cpflow-published (its registry entry says so).
    TORCH_ARG(std::string, strategy) = positivity_name(PositivityMap::Softplus);
    // plogv; NaN: upstream's rule, 2 with one block and 0 with several
    TORCH_ARG(double, prior_log_var) = std::numeric_limits<double>::quiet_NaN();
    // lifter: W̃ = (Θ_E h)/d_h + b with Θ_E ~ N(0, 1) instead of Θ_E h + b with U(±1/√d_h)
    TORCH_ARG(bool, readout_fanin_scale) = false;
    TORCH_ARG(uint64_t, seed) = 0;
};

struct CpFlowLogProb {
    torch::Tensor log_p;           // per row, float64
    int64_t nonpositive_dets = 0;  // Hessian determinants ≤ 0 seen (clamped)
};

class PublishedCpFlowImpl : public torch::nn::Module {
public:
    // Throws std::invalid_argument naming a bad option (dim must be 2 for the exact 2×2 log-det,
    // hidden even and ≥ 2, depth ≥ 2, blocks ≥ 1, strategy one of softplus | pgd | lifter).
    explicit PublishedCpFlowImpl(const PublishedCpFlowOptions& options);

    const PublishedCpFlowOptions& options() const { return options_; }
    // How the strategy keeps the constrained weights non-negative (its registry entry).
    PositivityMap positivity() const { return positivity_; }
    // The data-dependent ActNorm init (upstream's priming pass on the first batch): walks the
    // stack on x, setting every ActNorm (outer, between blocks and inside each ICNN) from its own
    // input, the lifter's weights conditioned on that same batch. A no-op after the first call.
    void initialise(const torch::Tensor& x);
    bool initialised() const { return initialised_; }
    // The constrained raw weights W̃ (pre-map) of every block, block after block: parameters for
    // softplus and pgd; for the lifter emitted from the conditioning batch `cond` (raw data
    // rows), each block from cond as it enters that block, detached.
    std::vector<torch::Tensor> constrained(const torch::Tensor& cond) const;
    // log p(x) with the given W̃ (as constrained() returns them); with `raw` empty each block uses
    // its own: the parameters, or for the lifter W̃ emitted from the scored batch itself as it
    // enters the block (training: the loss batch conditions its own weights). `create_graph`:
    // keep the graph for a backward to the parameters (training); without it the pass runs
    // under no-grad (evaluation).
    // F, ∇F and ∇²F are carried forward together through the network as 2-jets (value, the two
    // first and three second derivatives in y, stacked so each layer is one matrix product), so
    // the loss needs a single first-order backward instead of autograd's gradient-of-Hessian.
    CpFlowLogProb log_prob(const torch::Tensor& x, const std::vector<torch::Tensor>& raw,
                           bool create_graph) const;
    // The same log p with ∇F and the Hessian rows taken by autograd (double backward), as
    // upstream computes them: the reference the jet pass is tested against.
    CpFlowLogProb log_prob_by_autograd(const torch::Tensor& x,
                                       const std::vector<torch::Tensor>& raw,
                                       bool create_graph) const;
    // The stack on x without a graph, W̃ as in log_prob with `raw` empty: every block's input,
    // then the last layer's output (what the prior scores): blocks + 1 tensors.
    std::vector<torch::Tensor> block_inputs(const torch::Tensor& x) const;
    // pgd: clamps every W̃ at 0 (after an optimizer step); a no-op for the others.
    void project();
    // Parameters the optimizer trains (for the lifter the W̃ are not among them).
    std::vector<torch::Tensor> trainable_parameters() const;

private:
    // One convex block: its ICNN3, the potential's w0, w1 and (lifter) its emitter.
    struct Block {
        torch::Tensor w0, w1, W0, b0;
        std::vector<torch::Tensor> raw, bz, wx, cx, wx2, cx2, an_b, an_logs;
        // lifter: body layers and one readout per W̃
        std::vector<torch::Tensor> body_w, body_b, readout_w, readout_b;
    };
    // What a block does to its input y: f = ∇F(y) and det ∇²F(y).
    struct BlockMap {
        torch::Tensor f, det;
    };

    torch::Tensor act(const torch::Tensor& u) const;
    torch::Tensor symmetric_act(const torch::Tensor& u) const;
    torch::Tensor actnorm(const Block& blk, size_t l, const torch::Tensor& u) const;
    // The log-det-carrying ActNorm k (0: the outer one; k ≥ 1 after block k − 1).
    torch::Tensor flow_actnorm(size_t k, const torch::Tensor& x) const;
    torch::Tensor flow_actnorm_log_s(size_t k) const;
    torch::Tensor potential(const Block& blk, const torch::Tensor& y,
                            const std::vector<torch::Tensor>& raw, bool init_actnorms);
    // The potential's 2-jet at y: a 6 × n tensor (F, ∂₀F, ∂₁F, ∂₀₀F, ∂₀₁F, ∂₁₁F).
    torch::Tensor potential_jet(const Block& blk, const torch::Tensor& y,
                                const std::vector<torch::Tensor>& raw) const;
    BlockMap jet_map_of(const Block& blk, const torch::Tensor& y,
                        const std::vector<torch::Tensor>& raw) const;
    BlockMap autograd_map_of(const Block& blk, const torch::Tensor& y,
                             const std::vector<torch::Tensor>& raw, bool create_graph) const;
    // Block k's W̃: the parameters, or the lifter's emission from the block input y (detached).
    std::vector<torch::Tensor> block_raw(size_t k, const torch::Tensor& y) const;
    // The whole stack on x: log p with each block mapped by `map`, its W̃ from `raw` (flat,
    // block after block) or, with `raw` empty, block_raw; `inputs` (if given) receives every
    // block's input and then the last output, detached.
    template <class Map>
    CpFlowLogProb run_stack(const torch::Tensor& x, const std::vector<torch::Tensor>& raw,
                            Map&& map, std::vector<torch::Tensor>* inputs = nullptr) const;

    PublishedCpFlowOptions options_;
    PositivityMap positivity_ = PositivityMap::None;
    double prior_log_var_ = 2.0;
    bool initialised_ = false;
    std::vector<Block> blocks_;
    // The log-det-carrying ActNorms: one with one block, blocks + 1 with several.
    std::vector<torch::Tensor> flow_an_b_, flow_an_logs_;
};
TORCH_MODULE(PublishedCpFlow);

}  // namespace liftlab
