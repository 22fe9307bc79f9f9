#include "nn/torchscript_module.h"

#include <torch/csrc/jit/frontend/error_report.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <cmath>
#include <map>
#include <sstream>

#include "core/activity.h"
#include "core/error_text.h"
#include "core/errors.h"
#include "nn/torchscript_inspect.h"
#include "nn/torchscript_tensor_check.h"

namespace liftlab {

namespace {

// LibTorch's message in one line (core/error_text.h: no backtrace, TorchScript's error line).
std::string first_line(const std::exception& e) {
    const std::string text = error_text(e);
    return text.substr(0, text.find('\n'));
}

// The module owning the parameter `dotted_name` and the parameter's own name.
std::pair<torch::jit::Module, std::string> owner_of(const torch::jit::Module& module,
                                                    const std::string& dotted_name) {
    torch::jit::Module owner = module;
    std::string rest = dotted_name;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
        owner = owner.attr(rest.substr(0, dot)).toModule();
        rest = rest.substr(dot + 1);
    }
    return {owner, rest};
}

}  // namespace

LoadedTorchScript load_torchscript(const std::string& path, const std::string& key,
                                   const std::string& expected_sha256) {
    const Activity loading(std::string(kTorchScriptLoadActivity) + " " + path);
    LoadedTorchScript out;
    CheckedArchive archive = read_checked_archive(path, key, expected_sha256);
    out.sha256 = archive.sha256;
    hide_debug_pickles(archive.bytes, archive.entries);
    std::istringstream stream(std::move(archive.bytes));
    try {
        out.module = torch::jit::load(stream, torch::kCPU);
    } catch (const torch::jit::ErrorReport&) {
        // The archive's code does not compile. Its what() would print the damaged source around
        // the error, which for a damaged file can take seconds to minutes (found by fuzzing).
        throw SpecError(key,
                        path +
                            ": not a TorchScript archive: its code does not compile (a damaged "
                            "file, or one from an incompatible PyTorch); save the model with "
                            "torch.jit.script(model).save(path)");
    } catch (const std::exception& e) {
        // A torch.save() file is a zip archive too, without TorchScript's constants.
        const std::string what = first_line(e);
        const bool pickled = what.find("constants.pkl") != std::string::npos;
        throw SpecError(key,
                        path + ": not a TorchScript archive" +
                            (pickled ? " (it looks like a torch.save() file: a pickled module "
                                       "or state_dict)"
                                     : "") +
                            "; save the model with torch.jit.script(model).save(path): " + what);
    }
    if (const std::string problem = module_tensor_problem(out.module); !problem.empty())
        throw SpecError(key,
                        path + ": not a TorchScript archive: its " + problem + " (a damaged file)");
    if (!out.module.find_method("forward"))
        throw SpecError(key, path + ": the TorchScript module has no forward method");
    if (torchscript_parameters(out.module).empty())
        throw SpecError(key,
                        path + ": the TorchScript module has no parameters (nothing to train)");
    try {
        out.module.to(torch::kFloat32);
    } catch (const std::exception& e) {
        throw SpecError(key, path + ": cannot convert the parameters to float32: " + first_line(e));
    }
    return out;
}

torch::Tensor torchscript_forward(torch::jit::Module& module, const torch::Tensor& x,
                                  const std::string& dict_key, std::string* selector) {
    if (selector) selector->clear();
    // Op by op: no fused kernels, no autodiff subgraphs, the autograd of the same eager ops.
    torch::jit::GraphOptimizerEnabledGuard plain(false);
    const Activity running(kTorchScriptForwardActivity);
    c10::IValue out;
    try {
        out = module.forward({x});
    } catch (const std::exception& e) {
        const std::string advice = error_advice(e);
        throw std::runtime_error("forward failed: " + first_line(e) +
                                 (advice.empty() ? "" : " (" + advice + ")"));
    }
    if (out.isTensor()) return out.toTensor();
    if (out.isTuple() || out.isList()) {
        const auto elements =
            out.isTuple() ? out.toTupleRef().elements().vec() : out.toListRef().vec();
        const std::string what = out.isTuple() ? "a tuple" : "a list";
        if (elements.empty())
            throw std::runtime_error("forward returned an empty " + what.substr(2) +
                                     "; it must return a tensor");
        if (!elements.front().isTensor())
            throw std::runtime_error("forward returned " + what + " whose first element is " +
                                     elements.front().tagKind() +
                                     "; of a tuple or list LiftLab takes the first element, "
                                     "which must be a tensor");
        if (selector) *selector = "[0]";
        return elements.front().toTensor();
    }
    if (out.isGenericDict()) {
        std::string keys;
        for (const auto& entry : out.toGenericDict()) {
            const auto& k = entry.key();
            const std::string name = k.isString() ? k.toStringRef() : "<" + k.tagKind() + ">";
            if (k.isString() && name == dict_key) {
                if (!entry.value().isTensor())
                    throw std::runtime_error("forward returned a dict whose '" + dict_key +
                                             "' entry is " + entry.value().tagKind() +
                                             ", not a tensor");
                if (selector) *selector = "[\"" + dict_key + "\"]";
                return entry.value().toTensor();
            }
            if (keys.size() < 200) keys += (keys.empty() ? "" : ", ") + name;
        }
        throw std::runtime_error("forward returned a dict without the entry '" + dict_key +
                                 "' (its keys: " + keys + "); of a dict LiftLab takes the '" +
                                 dict_key + "' entry: put the tensor there, or return it alone");
    }
    throw std::runtime_error("forward returned " + out.tagKind() + ", not a tensor");
}

std::vector<std::pair<std::string, torch::Tensor>> torchscript_parameters(
    const torch::jit::Module& module) {
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (const auto& p : module.named_parameters(/*recurse=*/true))
        out.emplace_back(p.name, p.value);
    return out;
}

void set_torchscript_parameter(torch::jit::Module& module, const std::string& dotted_name,
                               const torch::Tensor& value) {
    auto [owner, name] = owner_of(module, dotted_name);
    owner.setattr(name, value);
}

void reset_torchscript_parameters(torch::jit::Module& module) {
    torch::NoGradGuard no_grad;
    const auto params = torchscript_parameters(module);
    std::map<std::string, int64_t> fan_in;  // of every "<x>.weight"
    auto fan_in_of = [](const torch::Tensor& w) {
        int64_t receptive = 1;
        for (int64_t i = 2; i < w.dim(); ++i) receptive *= w.size(i);
        return w.size(1) * receptive;
    };
    for (const auto& [name, t] : params)
        if (t.dim() >= 2) fan_in[name] = fan_in_of(t);
    const std::string suffix = ".bias";
    for (const auto& [name, t] : params) {
        if (t.dim() >= 2) {
            const int64_t n = fan_in.at(name);
            if (n > 0)
                t.uniform_(-1.0 / std::sqrt(static_cast<double>(n)),
                           1.0 / std::sqrt(static_cast<double>(n)));
            else
                t.zero_();
            continue;
        }
        const bool is_bias = name.size() >= suffix.size() &&
                             name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
        const std::string weight =
            is_bias ? name.substr(0, name.size() - suffix.size()) + ".weight" : "";
        const bool top_level_bias = name == "bias";
        const auto it = fan_in.find(top_level_bias ? "weight" : weight);
        if ((is_bias || top_level_bias) && it != fan_in.end() && it->second > 0) {
            const double bound = 1.0 / std::sqrt(static_cast<double>(it->second));
            t.uniform_(-bound, bound);
        } else {
            t.zero_();
        }
    }
}

std::vector<TorchScriptParameterInfo> inspect_torchscript(const std::string& path,
                                                          const std::string& key) {
    std::vector<TorchScriptParameterInfo> out;
    for (const auto& [name, t] : torchscript_parameters(load_torchscript(path, key).module))
        out.push_back({name, t.sizes().vec()});
    return out;
}

}  // namespace liftlab
