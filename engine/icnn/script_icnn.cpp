#include "icnn/script_icnn.h"

#include <regex>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "nn/torchscript_module.h"
#include "spec/experiment_spec.h"

namespace liftlab {

namespace {

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

}  // namespace

std::shared_ptr<TorchScriptIcnn> TorchScriptIcnn::load(const IcnnSpec& spec, int64_t input_dim,
                                                       const torch::Tensor& probe) {
    auto loaded = load_torchscript(spec.script, "icnn.script", spec.script_sha256);
    if (!spec.script_sha256.empty() && spec.script_sha256 != loaded.sha256)
        throw SpecError("icnn.script_sha256",
                        spec.script + " has SHA-256 " + loaded.sha256 + ", the spec records " +
                            spec.script_sha256 +
                            " (the file changed; remove icnn.script_sha256 to use it as it is)");
    auto out = std::make_shared<TorchScriptIcnn>();
    out->module_ = loaded.module;
    out->path_ = spec.script;
    out->sha256_ = loaded.sha256;
    out->input_dim_ = input_dim;
    const auto params = torchscript_parameters(out->module_);
    std::vector<std::string> all;
    for (const auto& [name, t] : params) all.push_back(name);
    std::set<std::string> chosen;
    if (!spec.constrained_regex.empty()) {
        const std::regex pattern(spec.constrained_regex);
        for (const auto& name : all)
            if (std::regex_match(name, pattern)) chosen.insert(name);
        if (chosen.empty())
            throw SpecError("icnn.constrained_regex", "'" + spec.constrained_regex +
                                                          "' matches none of the parameters of " +
                                                          spec.script + " (" + joined(all) + ")");
    } else {
        for (const auto& name : spec.constrained) {
            if (std::find(all.begin(), all.end(), name) == all.end())
                throw SpecError("icnn.constrained", spec.script + " has no parameter '" + name +
                                                        "' (it has " + joined(all) + ")");
            chosen.insert(name);
        }
    }
    for (const auto& [name, t] : params) {
        if (chosen.count(name)) {
            out->constrained_names_.push_back(name);
            out->own_constrained_.push_back(t);
        } else {
            out->free_names_.push_back(name);
            out->own_free_.push_back(t);
        }
    }
    // One forward pass on the probe rows, with the file's own tensors.
    torch::Tensor e;
    {
        torch::NoGradGuard no_grad;
        try {
            e = out->energy(probe, out->own_constrained_, out->own_free_);
        } catch (const std::runtime_error& err) {
            std::ostringstream shape;
            shape << probe.size(0) << " × " << probe.size(1);
            throw SpecError("icnn.script", spec.script + ": on a " + shape.str() +
                                               " batch of the task's samples: " + err.what());
        }
    }
    if (!torch::isfinite(e).all().item<bool>())
        throw SpecError("icnn.script",
                        spec.script + ": forward returned non-finite energies on the probe rows");
    return out;
}

std::vector<std::vector<int64_t>> TorchScriptIcnn::constrained_shapes() const {
    std::vector<std::vector<int64_t>> out;
    for (const auto& t : own_constrained_) out.push_back(t.sizes().vec());
    return out;
}

std::vector<std::vector<int64_t>> TorchScriptIcnn::free_shapes() const {
    std::vector<std::vector<int64_t>> out;
    for (const auto& t : own_free_) out.push_back(t.sizes().vec());
    return out;
}

torch::Tensor TorchScriptIcnn::energy(const torch::Tensor& x,
                                      const std::vector<torch::Tensor>& constrained,
                                      const std::vector<torch::Tensor>& free) {
    for (size_t i = 0; i < constrained_names_.size(); ++i)
        set_torchscript_parameter(module_, constrained_names_[i], constrained.at(i));
    for (size_t i = 0; i < free_names_.size(); ++i)
        set_torchscript_parameter(module_, free_names_[i], free.at(i));
    const auto e = torchscript_forward(module_, x, "energy");
    const int64_t n = x.size(0);
    if (!((e.dim() == 1 && e.size(0) == n) || (e.dim() == 2 && e.size(0) == n && e.size(1) == 1))) {
        std::ostringstream shape;
        for (int64_t i = 0; i < e.dim(); ++i) shape << (i ? " × " : "") << e.size(i);
        throw std::runtime_error("forward returned energies of shape " + shape.str() +
                                 "; an ICNN must give one energy per row (" + std::to_string(n) +
                                 " or " + std::to_string(n) + " × 1)");
    }
    if (e.scalar_type() != torch::kFloat32 && e.scalar_type() != torch::kFloat64)
        throw std::runtime_error("forward returned " + std::string(c10::toString(e.scalar_type())) +
                                 " energies; a floating-point tensor is needed");
    return e.reshape({n});
}

torch::jit::Module TorchScriptIcnn::baked(const std::vector<torch::Tensor>& constrained,
                                          const std::vector<torch::Tensor>& free) const {
    auto copy = module_.clone();
    for (size_t i = 0; i < constrained_names_.size(); ++i)
        set_torchscript_parameter(copy, constrained_names_[i],
                                  constrained.at(i).detach().clone().contiguous());
    for (size_t i = 0; i < free_names_.size(); ++i)
        set_torchscript_parameter(copy, free_names_[i], free.at(i).detach().clone().contiguous());
    return copy;
}

}  // namespace liftlab
