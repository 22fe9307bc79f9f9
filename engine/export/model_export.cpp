#include "export/model_export.h"

#include <filesystem>

#include "core/c_numbers.h"
#include "core/errors.h"
#include "data/dataset.h"
#include "icnn/icnn.h"
#include "nn/feature_backbone.h"
#include "nn/mlp_backbone.h"
#include "nn/torchscript_backbone.h"
#include "run/run_store.h"

#include <sstream>

namespace liftlab {

namespace {

// A trained tensor as an exported parameter: a float32 copy, trainable again in PyTorch.
torch::Tensor exported(const torch::Tensor& t) {
    return t.detach().to(torch::kCPU, torch::kFloat32).clone().contiguous().requires_grad_(true);
}

// The built-in MLP backbone (nn/mlp_backbone.h) as TorchScript: the same Linear layers and
// activation (torch.tanh for the tanh kernel, which agrees with it to 2.5 ulp).
torch::jit::Module mlp_module(const MlpBackboneImpl& mlp) {
    const std::string& activation = mlp.options().activation();
    torch::jit::Module m("LiftLabMlpBackbone");
    std::string body =
        "def forward(self, x):\n"
        "    if x.dim() > 2:\n"
        "        x = x.flatten(1)\n";
    const std::string act = activation == "relu"   ? "torch.relu"
                            : activation == "gelu" ? "torch.gelu"
                                                   : "torch.tanh";
    int i = 0;
    for (const auto& layer : *mlp.layers()) {
        auto* linear = layer->as<torch::nn::Linear>();
        const std::string w = "w" + std::to_string(i), b = "b" + std::to_string(i);
        m.register_parameter(w, exported(linear->weight), false);
        m.register_parameter(b, exported(linear->bias), false);
        body += "    x = " + act + "(torch.linear(x, self." + w + ", self." + b + "))\n";
        ++i;
    }
    body += "    return x\n";
    m.define(body);
    return m;
}

}  // namespace

std::optional<torch::jit::Module> backbone_head_module(FeatureBackbone& backbone,
                                                       const torch::Tensor& head_weights) {
    torch::NoGradGuard no_grad;
    torch::jit::Module features;
    std::string features_of = "self.backbone.forward(x)";
    if (auto* script = dynamic_cast<TorchScriptBackbone*>(&backbone)) {
        features = script->module().clone();
        features.eval();
        features_of = script->features_expression(features_of);
    } else if (auto* mlp = dynamic_cast<ModuleBackbone<MlpBackbone>*>(&backbone)) {
        features = mlp_module(*mlp->module());
    } else {
        return std::nullopt;
    }
    const int64_t d = head_weights.size(0) - 1;
    torch::jit::Module m("LiftLabModel");
    m.register_module("backbone", features);
    m.register_parameter("weight", exported(head_weights.narrow(0, 0, d).t()), false);
    m.register_parameter("bias", exported(head_weights[d]), false);
    m.define("def forward(self, x):\n    return torch.linear(" + features_of +
             ", self.weight, self.bias)\n");
    m.eval();
    return m;
}

torch::jit::Module icnn_module(IcnnImpl& icnn, const std::vector<torch::Tensor>& weights) {
    torch::NoGradGuard no_grad;
    const size_t nc = icnn.constrained_shapes().size();
    std::vector<torch::Tensor> constrained(weights.begin(), weights.begin() + nc);
    std::vector<torch::Tensor> free(weights.begin() + nc, weights.end());
    if (free.empty()) free = icnn.free_parameters();
    if (auto script = icnn.options().script()) {
        std::vector<torch::Tensor> c, f;
        for (const auto& t : constrained) c.push_back(exported(t));
        for (const auto& t : free) f.push_back(exported(t));
        return script->baked(c, f);
    }
    // The built-in formula (icnn/icnn.h): z_1 = softplus(W_0 x + b_0),
    // z_{i+1} = softplus(Wz_i z_i + Wx_i x + b_i), E = w_out z_L + w_x x + (c/2)|x|².
    torch::jit::Module m("LiftLabIcnn");
    m.register_parameter("w0", exported(free[0]), false);
    m.register_parameter("b0", exported(free[1]), false);
    std::string body =
        "def forward(self, x):\n"
        "    z = torch.softplus(torch.linear(x, self.w0, self.b0))\n";
    for (size_t i = 0; i + 1 < nc; ++i) {
        const std::string k = std::to_string(i + 1);
        m.register_parameter("wz" + k, exported(constrained[i]), false);
        m.register_parameter("wx" + k, exported(free[2 + 2 * i]), false);
        m.register_parameter("b" + k, exported(free[3 + 2 * i]), false);
        body += "    z = torch.softplus(torch.linear(z, self.wz" + k +
                ") + torch.linear(x, self.wx" + k + ", self.b" + k + "))\n";
    }
    m.register_parameter("w_out", exported(constrained[nc - 1]), false);
    m.register_parameter("w_x", exported(free.back()), false);
    // A Python literal: the C decimal point whatever the locale, exact (shortest round trip).
    body +=
        "    return torch.linear(z, self.w_out).squeeze(1) + torch.linear(x, "
        "self.w_x).squeeze(1) + " +
        c_shortest(0.5 * icnn.quadratic()) + " * x.pow(2).sum(1)\n";
    m.define(body);
    return m;
}

void add_float_attribute(torch::jit::Module& module, const std::string& name, double value) {
    module.register_attribute(name, c10::FloatType::get(), value);
}

torch::jit::Module test_data_module(const Dataset& data) {
    torch::jit::Module m("LiftLabTestData");
    m.register_buffer("x", data.x_test.detach().cpu().contiguous());
    if (data.y_test.defined()) m.register_buffer("y", data.y_test.detach().cpu().contiguous());
    if (data.labels_test.defined())
        m.register_buffer("labels", data.labels_test.detach().cpu().contiguous());
    m.define("def forward(self, x):\n    return x\n");
    return m;
}

void save_module(torch::jit::Module& module, const std::string& path) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (ec) throw WriteError(path, ec.message());
    // Serialised in memory, then written by the run store's checked writer: LibTorch's own file
    // writer finishes the archive in a destructor, where a full disk or a file size limit
    // would end the process instead of the run.
    std::ostringstream bytes;
    module.save(bytes);
    write_file_atomic(path, bytes.str());
}

}  // namespace liftlab
