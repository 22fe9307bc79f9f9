// A user's TorchScript ICNN (spec icnn.script; docs/your-model.md): forward(x) → E(x)
// for x of n × d (E of n or n × 1). The parameters named by icnn.constrained (or matched by
// icnn.constrained_regex) are the non-negative θ a positivity strategy provides; every other
// parameter is free. IcnnImpl runs it in place of its built-in formula: each call swaps the
// strategy's tensors into the module's parameter slots and calls forward, so the lifter's emitted
// tensors carry their autograd history through the user's code.
#pragma once
#include <torch/script.h>

#include <memory>
#include <string>
#include <vector>

namespace liftlab {

struct IcnnSpec;

class TorchScriptIcnn {
public:
    // Loads spec.script and selects its constrained parameters; a probe forward pass on `probe`
    // (n × input_dim rows, without gradients) must give n finite energies. Throws SpecError
    // ("icnn.script" or "icnn.constrained…") naming the file and what is wrong.
    static std::shared_ptr<TorchScriptIcnn> load(const IcnnSpec& spec, int64_t input_dim,
                                                 const torch::Tensor& probe);

    const std::string& path() const { return path_; }
    const std::string& sha256() const { return sha256_; }
    int64_t input_dim() const { return input_dim_; }
    // Dotted names and shapes, in the module's parameter order.
    const std::vector<std::string>& constrained_names() const { return constrained_names_; }
    const std::vector<std::string>& free_names() const { return free_names_; }
    std::vector<std::vector<int64_t>> constrained_shapes() const;
    std::vector<std::vector<int64_t>> free_shapes() const;
    // The file's own tensors (leaves of the module's parameter slots as loaded).
    const std::vector<torch::Tensor>& own_constrained() const { return own_constrained_; }
    const std::vector<torch::Tensor>& own_free() const { return own_free_; }

    // E(x) (n) with these tensors in the constrained and free slots.
    torch::Tensor energy(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                         const std::vector<torch::Tensor>& free);
    // A deep copy of the module with these tensors (detached) as its parameters: the trained
    // ICNN a PyTorch user loads with torch.jit.load.
    torch::jit::Module baked(const std::vector<torch::Tensor>& constrained,
                             const std::vector<torch::Tensor>& free) const;

private:
    torch::jit::Module module_;
    std::string path_, sha256_;
    int64_t input_dim_ = 0;
    std::vector<std::string> constrained_names_, free_names_;
    std::vector<torch::Tensor> own_constrained_, own_free_;
};

}  // namespace liftlab
