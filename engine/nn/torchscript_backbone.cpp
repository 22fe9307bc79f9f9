#include "nn/torchscript_backbone.h"

#include <sstream>

#include "core/errors.h"
#include "data/dataset.h"
#include "nn/torchscript_module.h"
#include "spec/experiment_spec.h"

namespace liftlab {

namespace {

constexpr int64_t kProbeRows = 4;  // training rows of the probe forward pass

std::string batch_shape_text(const torch::Tensor& t) {
    std::ostringstream s;
    for (int64_t i = 0; i < t.dim(); ++i) s << (i ? " × " : "") << t.size(i);
    if (t.dim() == 0) s << "a scalar";
    return s.str();
}

}  // namespace

TorchScriptBackbone::TorchScriptBackbone(torch::jit::Module module, std::string path,
                                         std::string sha256, int64_t feature_dim, int64_t row_dims)
    : module_(std::move(module)),
      path_(std::move(path)),
      sha256_(std::move(sha256)),
      feature_dim_(feature_dim),
      row_dims_(row_dims) {}

torch::Tensor TorchScriptBackbone::features(const torch::Tensor& x) {
    torch::Tensor f;
    try {
        f = torchscript_forward(module_, x);
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(path_ + ": " + e.what());
    }
    // Dimensions past the rows' (c × h × w feature maps, a sequence's positions) are flattened;
    // float64 (or half) features become float32, the last layer's type.
    if (f.dim() > row_dims_ + 1) f = f.flatten(row_dims_);
    return f.scalar_type() == torch::kFloat32 ? f : f.to(torch::kFloat32);
}

std::string TorchScriptBackbone::features_expression(const std::string& value) const {
    // The probe saw the features' rank: row_dims_ + 1 after flattening, more before it.
    return "torch.flatten(" + value + selector_ + ", " + std::to_string(row_dims_) + ").float()";
}

std::vector<torch::Tensor> TorchScriptBackbone::parameters() {
    std::vector<torch::Tensor> out;
    for (auto& [name, p] : torchscript_parameters(module_)) out.push_back(p);
    return out;
}

std::vector<std::pair<std::string, torch::Tensor>> TorchScriptBackbone::named_parameters() {
    return torchscript_parameters(module_);
}

std::shared_ptr<TorchScriptBackbone> load_torchscript_backbone(const BackboneSpec& spec,
                                                               const Dataset& data) {
    const std::string key = "backbone.script";
    auto loaded = load_torchscript(spec.script, key, spec.script_sha256);
    if (!spec.script_sha256.empty() && spec.script_sha256 != loaded.sha256)
        throw SpecError(
            "backbone.script_sha256",
            spec.script + " has SHA-256 " + loaded.sha256 + ", the spec records " +
                spec.script_sha256 +
                " (the file changed; remove backbone.script_sha256 to use it as it is)");
    if (spec.init == "reset") reset_torchscript_parameters(loaded.module);
    const int64_t rows = std::min<int64_t>(kProbeRows, data.n_train());
    const auto x = data.x_train.narrow(0, 0, rows).cpu();
    const auto y = data.y_train.narrow(0, 0, rows).cpu();
    torch::Tensor f;
    std::string selector;  // how forward's value gives the features (torchscript_forward)
    {
        torch::NoGradGuard no_grad;
        loaded.module.eval();  // a probe must not move BatchNorm statistics
        try {
            f = torchscript_forward(loaded.module, x, "features", &selector);
        } catch (const std::runtime_error& e) {
            throw SpecError(key, spec.script + ": on a batch of the task's inputs (" +
                                     batch_shape_text(x) + "): " + e.what());
        }
        loaded.module.train();
    }
    // Features line up with the targets row by row: n × d against n × k (n × s × d against
    // n × s × k for operator learning); further dimensions are flattened into d.
    const int64_t row_dims = y.dim() - 1;
    if (f.dim() > row_dims + 1) f = f.flatten(row_dims);
    bool fits = f.dim() == y.dim() && f.dim() >= 2 && f.size(-1) > 0;
    for (int64_t i = 0; fits && i + 1 < y.dim(); ++i) fits = f.size(i) == y.size(i);
    if (!fits) {
        std::ostringstream wanted;
        for (int64_t i = 0; i + 1 < y.dim(); ++i) wanted << y.size(i) << " × ";
        wanted << "d";
        throw SpecError(key, spec.script + ": forward on a " + batch_shape_text(x) +
                                 " batch of the task's inputs returned " + batch_shape_text(f) +
                                 " features; the targets are " + batch_shape_text(y) +
                                 ", so the features must be " + wanted.str());
    }
    if (!f.is_floating_point())
        throw SpecError(key, spec.script + ": forward returned " +
                                 std::string(c10::toString(f.scalar_type())) +
                                 " features; floating-point features are needed");
    f = f.to(torch::kFloat32);  // as features() converts them
    if (!torch::isfinite(f).all().item<bool>())
        throw SpecError(key, spec.script + ": forward returned non-finite features on the first " +
                                 std::to_string(rows) + " training rows");
    auto out = std::make_shared<TorchScriptBackbone>(loaded.module, spec.script, loaded.sha256,
                                                     f.size(-1), row_dims);
    out->set_output_selector(selector);
    return out;
}

}  // namespace liftlab
