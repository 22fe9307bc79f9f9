#include <stdexcept>

#include "data/dataset.h"
#include "nn/backbone_freeze.h"
#include "nn/conv_backbone.h"
#include "nn/feature_backbone.h"
#include "nn/fno1d.h"
#include "nn/mlp_backbone.h"
#include "nn/torchscript_backbone.h"
#include "spec/experiment_spec.h"

namespace liftlab {

namespace {

std::shared_ptr<FeatureBackbone> build_backbone(const BackboneSpec& spec, const Dataset& data) {
    if (spec.kind == "torchscript") return load_torchscript_backbone(spec, data);
    if (spec.kind == "cnn") {
        if (data.x_train.dim() != 4 || data.x_train.size(2) != data.x_train.size(3))
            throw std::invalid_argument("cnn backbone needs square images n × c × h × w");
        std::vector<int64_t> channels(spec.channels.begin(), spec.channels.end());
        ConvBackbone net(
            ConvBackboneOptions(data.x_train.size(1), data.x_train.size(2), spec.feature_dim)
                .channels(channels));
        return std::make_shared<ModuleBackbone<ConvBackbone>>(net, spec.feature_dim);
    }
    if (spec.kind == "fno1d") {
        Fno1d net(Fno1dOptions()
                      .modes(spec.modes)
                      .width(spec.width)
                      .layers(spec.layers)
                      .projection(spec.feature_dim));
        return std::make_shared<ModuleBackbone<Fno1d>>(net, spec.feature_dim);
    }
    if (spec.kind == "mlp") {
        std::vector<int64_t> hidden(spec.hidden.begin(), spec.hidden.end());
        // Images are flattened: an MLP sees every pixel as an input.
        const int64_t input_dim = data.x_train[0].numel();
        MlpBackbone net(MlpBackboneOptions(input_dim, spec.feature_dim)
                            .hidden(hidden)
                            .activation(spec.activation));
        return std::make_shared<ModuleBackbone<MlpBackbone>>(net, spec.feature_dim);
    }
    throw std::invalid_argument("backbone kind '" + spec.kind + "' is not available");
}

}  // namespace

std::shared_ptr<FeatureBackbone> make_backbone(const BackboneSpec& spec, const Dataset& data,
                                               FreezeResolution* freeze) {
    auto backbone = build_backbone(spec, data);
    const auto resolved = freeze_backbone(*backbone, spec);
    if (freeze) *freeze = resolved;
    return backbone;
}

}  // namespace liftlab
