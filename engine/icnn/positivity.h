// Positivity strategies for the constrained ICNN weights θ (METHODS.md Part 2, "Positivity
// strategies"): each one owns its own trainable parameters and emits non-negative tensors θ.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace liftlab {

// Base of every strategy. `shapes` lists the constrained tensors in the order weights() returns
// them. `batch` is the conditioning input (n × d); only the lifter variants read it, always
// detached.
class PositivityStrategy : public torch::nn::Module {
public:
    explicit PositivityStrategy(std::vector<std::vector<int64_t>> shapes);
    ~PositivityStrategy() override = default;

    // The effective non-negative tensors θ, one per shape.
    virtual std::vector<torch::Tensor> weights(const torch::Tensor& batch) = 0;
    // The tensors θ̃ before the softplus readout (pgd: θ itself).
    virtual std::vector<torch::Tensor> pre_readout(const torch::Tensor& batch) = 0;
    // Called after every optimizer step (pgd projects; the others do nothing).
    virtual void after_step() {}
    // Only lifter-decoupled reads this: the independent batch X′ its body is conditioned on,
    // replacing the batch passed to weights(). Set it before each weights() call; others ignore it.
    virtual void set_independent_batch(const torch::Tensor& independent_batch) {}
    // θ from θ̃: softplus for every strategy except pgd (identity), so that
    // weights(X) == readout(pre_readout(X)).
    virtual std::vector<torch::Tensor> readout(const std::vector<torch::Tensor>& pre) const;
    // true for pgd: θ̃ is θ itself and the shoulder is θ == 0 (METHODS.md, "Shoulder").
    virtual bool projected() const { return false; }

    const std::vector<std::vector<int64_t>>& shapes() const { return shapes_; }

protected:
    std::vector<std::vector<int64_t>> shapes_;
};

// `pgd`: θ is trained directly and projected θ ← max(θ, 0) after every step.
// Init |N(0, π/(2 n_in))| with n_in the last dimension of each shape.
class PgdPositivity : public PositivityStrategy {
public:
    explicit PgdPositivity(std::vector<std::vector<int64_t>> shapes);
    std::vector<torch::Tensor> weights(const torch::Tensor& batch) override;
    std::vector<torch::Tensor> pre_readout(const torch::Tensor& batch) override;
    void after_step() override;
    std::vector<torch::Tensor> readout(const std::vector<torch::Tensor>& pre) const override {
        return pre;
    }
    bool projected() const override { return true; }

private:
    std::vector<torch::Tensor> theta_;
};

// `softplus` (and `softplus-wide`, which is this strategy on a wider ICNN): θ = softplus(θ̃),
// θ̃ trained directly, init θ̃ = −2.
class SoftplusPositivity : public PositivityStrategy {
public:
    explicit SoftplusPositivity(std::vector<std::vector<int64_t>> shapes);
    std::vector<torch::Tensor> weights(const torch::Tensor& batch) override;
    std::vector<torch::Tensor> pre_readout(const torch::Tensor& batch) override;

private:
    std::vector<torch::Tensor> theta_tilde_;
};

struct LifterPositivityOptions {
    explicit LifterPositivityOptions(int64_t input_dim) : input_dim_(input_dim) {}
    TORCH_ARG(int64_t, input_dim);
    TORCH_ARG(bool, slack) = true;       // false: `lifter-noslack` (readouts have no bias b)
    TORCH_ARG(bool, body) = true;        // false: `lifter-nobody` (h is a learned constant)
    TORCH_ARG(bool, decoupled) = false;  // true: `lifter-decoupled` (body reads X′, not the batch)
};

// `lifter` and its ablations: θ̃ = b + Θ_E h_φ(X), θ = softplus(θ̃). h_φ is a DeepSets body
// (per-sample MLP d→64→64→96, ReLU, mean-pooled, standardised across its 96 entries); one linear
// readout 96 → numel per constrained tensor, whose bias is the slack b (init −2).
class LifterPositivity : public PositivityStrategy {
public:
    LifterPositivity(std::vector<std::vector<int64_t>> shapes,
                     const LifterPositivityOptions& options);
    std::vector<torch::Tensor> weights(const torch::Tensor& batch) override;
    std::vector<torch::Tensor> pre_readout(const torch::Tensor& batch) override;
    void set_independent_batch(const torch::Tensor& independent_batch) override;

    // The standardised 96-vector h_φ(X) (or the learned constant for lifter-nobody).
    torch::Tensor body_features(const torch::Tensor& batch);
    bool has_slack() const { return options_.slack(); }

private:
    LifterPositivityOptions options_;
    torch::nn::Sequential body_{nullptr};
    torch::Tensor constant_h_;
    std::vector<torch::nn::Linear> readouts_;
    torch::Tensor independent_batch_;
};

// The valid strategy names, for messages and presets.
const std::vector<std::string>& positivity_strategy_names();

// Builds the strategy called `name` for constrained tensors of the given shapes; `input_dim` is the
// width d of a conditioning sample. Throws std::invalid_argument naming the valid strategies.
std::shared_ptr<PositivityStrategy> make_positivity(const std::string& name,
                                                    std::vector<std::vector<int64_t>> shapes,
                                                    int64_t input_dim);

}  // namespace liftlab
