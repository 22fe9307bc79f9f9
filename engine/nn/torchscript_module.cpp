#include "nn/torchscript_module.h"

#include "nn/torchscript_inspect.h"

#include <openssl/evp.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <cmath>
#include <map>
#include <sstream>

#include "core/bounded_input.h"
#include "core/errors.h"

namespace liftlab {

namespace {

std::string hex_sha256(const std::string& bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("SHA-256 failed");
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < length; ++i) {
        out.push_back(hex[digest[i] >> 4]);
        out.push_back(hex[digest[i] & 15]);
    }
    return out;
}

// LibTorch's messages carry a C++ backtrace after the first lines; a user needs the first one.
// An error inside TorchScript code ends with the Python-side error ("RuntimeError: …") after
// the interpreter's traceback: that line, with the first frame of the user's own code.
std::string first_line(const std::string& what) {
    const std::string traceback = "Traceback of TorchScript, original code";
    if (const auto at = what.find(traceback); at != std::string::npos) {
        std::string last;
        std::istringstream lines(what.substr(at));
        std::string line, frame;
        while (std::getline(lines, line)) {
            if (line.find_first_not_of(" \t") == std::string::npos) continue;
            if (frame.empty() && line.rfind("  File \"", 0) == 0) frame = line.substr(2);
            last = line;
        }
        return last + (frame.empty() ? "" : " (" + frame + ")");
    }
    const auto end = what.find('\n');
    std::string line = what.substr(0, end);
    const auto pos = line.find(" (most recent call first)");
    if (pos != std::string::npos) line = line.substr(0, pos);
    return line;
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

LoadedTorchScript load_torchscript(const std::string& path, const std::string& key) {
    std::string bytes;
    try {
        bytes = read_regular_file(path, kMaxTorchScriptBytes);
    } catch (const DataError& e) {
        throw SpecError(key, e.what());
    }
    LoadedTorchScript out;
    out.sha256 = hex_sha256(bytes);
    std::istringstream stream(bytes);
    try {
        out.module = torch::jit::load(stream, torch::kCPU);
    } catch (const std::exception& e) {
        // A torch.save() file is a zip archive too, without TorchScript's constants.
        const std::string what = first_line(e.what());
        const bool pickled = what.find("constants.pkl") != std::string::npos;
        throw SpecError(key,
                        path + ": not a TorchScript archive" +
                            (pickled ? " (it looks like a torch.save() file: a pickled module "
                                       "or state_dict)"
                                     : "") +
                            "; save the model with torch.jit.script(model).save(path): " + what);
    }
    if (!out.module.find_method("forward"))
        throw SpecError(key, path + ": the TorchScript module has no forward method");
    if (torchscript_parameters(out.module).empty())
        throw SpecError(key,
                        path + ": the TorchScript module has no parameters (nothing to train)");
    try {
        out.module.to(torch::kFloat32);
    } catch (const std::exception& e) {
        throw SpecError(
            key, path + ": cannot convert the parameters to float32: " + first_line(e.what()));
    }
    return out;
}

torch::Tensor torchscript_forward(torch::jit::Module& module, const torch::Tensor& x) {
    // Op by op: no fused kernels, no autodiff subgraphs, the autograd of the same eager ops.
    torch::jit::GraphOptimizerEnabledGuard plain(false);
    c10::IValue out;
    try {
        out = module.forward({x});
    } catch (const std::exception& e) {
        throw std::runtime_error("forward failed: " + first_line(e.what()));
    }
    if (!out.isTensor())
        throw std::runtime_error("forward returned " + out.tagKind() + ", not a tensor");
    return out.toTensor();
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
