// backbone.freeze (spec/experiment_spec.h): which parameters of a backbone stay fixed. A
// TorchScript file's own requires_grad=False is honoured; the spec adds to it (true: every
// parameter; a list of dotted names; a regular expression matched against whole names). A
// backbone with no parameter left to train is a linear probe: its features are a fixed function
// of the inputs (training/method_trainer.h).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace liftlab {

class FeatureBackbone;
struct BackboneSpec;

struct FreezeResolution {
    std::vector<std::string> frozen;            // every fixed parameter, in the backbone's order
    std::vector<std::string> by_file;           // of those, the ones the file itself had frozen
    int64_t parameters = 0;                     // parameter tensors of the backbone
    int64_t frozen_elements = 0, elements = 0;  // scalars fixed / in all
    bool linear_probe() const {
        return parameters > 0 && static_cast<int64_t>(frozen.size()) == parameters;
    }
};

// Applies spec's freeze to `backbone` (requires_grad off on the chosen parameters) and says what
// is now fixed. Throws SpecError("backbone.freeze", …) when a listed name is not a parameter of
// the backbone or the regular expression matches none (the message lists some parameter names).
FreezeResolution freeze_backbone(FeatureBackbone& backbone, const BackboneSpec& spec);

// The record spec.json keeps under "backbone_freeze": {"frozen": [names], "by_file": [names],
// "parameters": n, "frozen_elements": …, "elements": …, "linear_probe": bool}.
nlohmann::json to_json(const FreezeResolution& r);

}  // namespace liftlab
