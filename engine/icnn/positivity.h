// Positivity strategies for the ICNN's weights (docs/methods.md §3.2–§3.4): each
// one owns its own trainable parameters and emits the non-negative constrained tensors θ (Wz_i,
// w_out). The lifter family also emits every unconstrained ICNN tensor (W_0, b_0, Wx_i, b_i, w_x)
// from the same batch code, so the ICNN template around it is frozen (the reference's
// every-tensor emission); the direct strategies leave those to the ICNN's own parameters.
//
// The weight list. pre_readout() and weights() return the constrained tensors first, in the
// order of `shapes`, followed — only when emits_free() — by one emitted tensor per entry of
// `free_shapes` (the ICNN's unconstrained tensors). The positivity readout (softplus; identity for
// pgd) applies to the constrained entries only; the free entries pass through unchanged.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "nn/outer_product_gradient.h"

namespace liftlab {

// The reference's pool_norm (luqigroup/lift `lift/models/hypernet.py`): the pooled body output
// standardised across its entries, (h − mean) / (std + 1e−5) with torch's default, unbiased std.
// Every lifter (the ICNN's and the published CP-Flow's) standardises through this.
torch::Tensor pool_norm(const torch::Tensor& h);

using TensorShapes = std::vector<std::vector<int64_t>>;

// Base of every strategy. `batch` is the conditioning input (n × d); only the lifter variants
// read it, always detached.
class PositivityStrategy : public torch::nn::Module {
public:
    PositivityStrategy(TensorShapes shapes, TensorShapes free_shapes);
    ~PositivityStrategy() override = default;

    // θ̃ for every constrained tensor (pgd: θ itself), then the emitted free tensors (see above).
    virtual std::vector<torch::Tensor> pre_readout(const torch::Tensor& batch) = 0;
    // readout(pre_readout(batch)): non-negative constrained tensors, then the free ones.
    std::vector<torch::Tensor> weights(const torch::Tensor& batch) {
        return readout(pre_readout(batch));
    }
    // Called after every optimizer step (pgd projects; the others do nothing).
    virtual void after_step() {}
    // Start from these constrained values θ (a TorchScript ICNN's own, icnn.init "file"): pgd
    // takes max(θ, 0), softplus θ̃ = softplus⁻¹(max(θ, 10⁻⁶)) as for its folded-normal draw.
    // The lifter family (every tensor emitted from its own init) and softplus-const (its
    // constant is the point of the variant) keep their init.
    virtual void start_from(const std::vector<torch::Tensor>& theta) {}
    // A fork from another strategy's iterate (issue 40, docs/methods.md §4.5), so that readout()
    // gives the same θ: `pre` holds the source's constrained pre-readout values (θ̃, or θ itself
    // when `source_projected`: pgd), `free` the source's free ICNN tensors (its own, or emitted).
    // pgd: θ = softplus(θ̃), or θ; softplus: θ̃, or softplus⁻¹(max(θ, 10⁻⁶)) from pgd (θ = 0 has
    // no finite preimage: the floor of the folded-normal init); the lifter family: every
    // readout's Θ_E = 0 and its bias b = that θ̃ (free: b = the tensor), whatever the batch.
    // The direct strategies leave `free` to the ICNN (IcnnTrainer). Throws std::invalid_argument
    // where the strategy cannot hold θ (lifter-noslack: no slack b).
    virtual void fork_from(const std::vector<torch::Tensor>& pre, bool source_projected,
                           const std::vector<torch::Tensor>& free);
    // The reference's symmetric initialisation (MethodSpec::init_noise): a per-element
    // N(0, sd²) perturbation of the strategy's own pre-positivity parameter, drawn from `gen` as
    // one vector per constrained tensor in the order of shapes(), so that every strategy given the
    // same generator state draws the same values. pgd: θ += noise, projected; softplus:
    // θ̃ += noise; the lifter family with a slack: the slack b of every constrained readout is
    // replaced by the noise. Throws std::invalid_argument where the strategy has no such
    // parameter (softplus-const, lifter-noslack).
    virtual void perturb_init(double sd, at::Generator& gen);
    // Only lifter-decoupled reads this: the independent batch X′ its body is conditioned on,
    // replacing the batch passed to pre_readout(). Set it before each call; others ignore it.
    virtual void set_independent_batch(const torch::Tensor& independent_batch) {}
    // true for lifter-decoupled: set_independent_batch() is needed before every pre_readout().
    virtual bool reads_independent_batch() const { return false; }
    // The positivity map on the first constrained_count() entries (softplus, identity for pgd);
    // later entries (emitted free tensors) unchanged.
    std::vector<torch::Tensor> readout(const std::vector<torch::Tensor>& pre) const;
    // true for pgd: θ̃ is θ itself and the shoulder is θ == 0 (docs/methods.md §4.2).
    virtual bool projected() const { return false; }
    // true for the lifter family: the free ICNN tensors are emitted, the template is frozen.
    virtual bool emits_free() const { return false; }
    // true when the constrained readouts have a slack bias b (the lifter, nobody, decoupled):
    // σ²_Jac contracts with J_b; without a slack it is a structural zero (docs/methods.md §4.1).
    virtual bool has_slack() const { return false; }
    // Asks the strategy to deliver the gradients of its outer-product weights in factored form
    // (nn/outer_product_gradient.h) from now on; returns those weights with their collectors
    // (empty: it has none, every gradient stays dense). Their .grad() is then never set: only an
    // optimizer that reads the collectors (FusedAdam::factored) may train them.
    virtual std::vector<FactoredWeight> factor_gradients() { return {}; }
    // The push into the shoulder (issue 40): the constrained coordinates where masks[i] (one bool
    // tensor of shapes()[i] per constrained tensor) is true are set into the readout shoulder:
    // softplus θ̃ = depth; pgd θ = 0; the lifter family b = depth and that coordinate's row of
    // Θ_E = 0 (so θ̃ = depth whatever the batch). Optimizer moments are left as they are. Throws
    // std::invalid_argument where the strategy has no such parameter (lifter-noslack).
    virtual void push(const std::vector<torch::Tensor>& masks, double depth);

    const TensorShapes& shapes() const { return shapes_; }
    const TensorShapes& free_shapes() const { return free_shapes_; }
    size_t constrained_count() const { return shapes_.size(); }

protected:
    TensorShapes shapes_;
    TensorShapes free_shapes_;
};

// `pgd`: θ is trained directly and projected θ ← max(θ, 0) after every step.
// Init |N(0, π/(2 n_in))| (folded normal) with n_in the last dimension of each shape.
class PgdPositivity : public PositivityStrategy {
public:
    explicit PgdPositivity(TensorShapes shapes);
    std::vector<torch::Tensor> pre_readout(const torch::Tensor& batch) override;
    void after_step() override;
    void start_from(const std::vector<torch::Tensor>& theta) override;
    void fork_from(const std::vector<torch::Tensor>& pre, bool source_projected,
                   const std::vector<torch::Tensor>& free) override;
    void perturb_init(double sd, at::Generator& gen) override;
    void push(const std::vector<torch::Tensor>& masks, double depth) override;
    bool projected() const override { return true; }

private:
    std::vector<torch::Tensor> theta_;
};

// `softplus` (and `softplus-wide`, the same on a wider ICNN): θ = softplus(θ̃), θ̃ trained
// directly. Init θ̃ = softplus⁻¹(max(w, 10⁻⁶)) with w the folded-normal draw (the reference's
// init: about a third of the coordinates start in the shoulder), or, for `softplus-const`, the
// constant θ̃ = −2 (none in the shoulder).
class SoftplusPositivity : public PositivityStrategy {
public:
    enum class Init { FoldedNormal, Constant };
    SoftplusPositivity(TensorShapes shapes, Init init);
    std::vector<torch::Tensor> pre_readout(const torch::Tensor& batch) override;
    void start_from(const std::vector<torch::Tensor>& theta) override;
    void fork_from(const std::vector<torch::Tensor>& pre, bool source_projected,
                   const std::vector<torch::Tensor>& free) override;
    void perturb_init(double sd, at::Generator& gen) override;
    void push(const std::vector<torch::Tensor>& masks, double depth) override;

private:
    Init init_;
    std::vector<torch::Tensor> theta_tilde_;
};

struct LifterPositivityOptions {
    explicit LifterPositivityOptions(int64_t input_dim) : input_dim_(input_dim) {}
    TORCH_ARG(int64_t, input_dim);
    TORCH_ARG(bool, slack) = true;       // false: `lifter-noslack` (constrained readouts, no bias)
    TORCH_ARG(bool, body) = true;        // false: `lifter-nobody` (h is a learned constant)
    TORCH_ARG(bool, decoupled) = false;  // true: `lifter-decoupled` (body reads X′, not the batch)
    // The per-sample MLP's widths (icnn.lifter_body); the last is the width d_h of the code.
    TORCH_ARG(std::vector<int64_t>, body_widths) = std::vector<int64_t>({64, 64, 96});
    TORCH_ARG(bool, pool_norm) = true;  // standardise the pooled code (icnn.lifter_pool_norm)
};

// `lifter` and its ablations: for every ICNN tensor, `b + Θ_E h_φ(X)` — through softplus for the
// constrained ones. h_φ is a DeepSets body: a per-sample MLP (default d→64→64→96) with a ReLU
// after every Linear, mean-pooled, then (pool_norm, the default) standardised across its d_h
// entries, (h − mean)/(std + 1e−5) with the unbiased std. One linear readout d_h → numel per
// tensor, with LibTorch's default Linear init (U(±1/√d_h) for weight and bias, as PyTorch's),
// except that a constrained readout's bias (the slack b) starts at −2.
class LifterPositivity : public PositivityStrategy {
public:
    LifterPositivity(TensorShapes shapes, TensorShapes free_shapes,
                     const LifterPositivityOptions& options);
    std::vector<torch::Tensor> pre_readout(const torch::Tensor& batch) override;
    void set_independent_batch(const torch::Tensor& independent_batch) override;
    bool reads_independent_batch() const override { return options_.decoupled(); }
    bool emits_free() const override { return true; }
    bool has_slack() const override { return options_.slack(); }
    void fork_from(const std::vector<torch::Tensor>& pre, bool source_projected,
                   const std::vector<torch::Tensor>& free) override;
    void perturb_init(double sd, at::Generator& gen) override;
    void push(const std::vector<torch::Tensor>& masks, double depth) override;
    // Every readout weight Θ (θ̃ = b + Θ h): ∂ℓ/∂Θ = g hᵀ.
    std::vector<FactoredWeight> factor_gradients() override;

    // The pooled code h_φ(X), d_h entries, standardised under pool_norm (or the learned constant
    // for lifter-nobody).
    torch::Tensor body_features(const torch::Tensor& batch);
    // The readout of constrained tensor i (i < constrained_count()) or of free tensor
    // i − constrained_count().
    torch::nn::Linear& readout_layer(size_t i) { return readouts_.at(i); }

private:
    LifterPositivityOptions options_;
    torch::nn::Sequential body_{nullptr};
    torch::Tensor constant_h_;
    std::vector<torch::nn::Linear> readouts_;  // constrained first, then free
    // One per readout once factor_gradients() was called (empty: dense gradients).
    std::vector<std::shared_ptr<OuterProductGradient>> factored_;
    torch::Tensor independent_batch_;
};

// The strategies are registered by name in builtins/builtin_methods.cpp; build one by name with
// make_positivity (methods/method_registry.h).

}  // namespace liftlab
