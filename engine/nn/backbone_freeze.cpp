#include "nn/backbone_freeze.h"

#include <algorithm>
#include <regex>
#include <set>

#include "core/errors.h"
#include "nn/feature_backbone.h"
#include "spec/experiment_spec.h"

namespace liftlab {

namespace {

// "a, b, c, … (12 in all)": enough names for the user to see how this backbone names them.
std::string some_parameter_names(const std::vector<std::pair<std::string, torch::Tensor>>& named) {
    constexpr size_t kShown = 8;
    std::string out;
    for (size_t i = 0; i < std::min(kShown, named.size()); ++i)
        out += (i ? ", " : "") + named[i].first;
    if (named.size() > kShown) out += ", … (" + std::to_string(named.size()) + " in all)";
    return out;
}

}  // namespace

FreezeResolution freeze_backbone(FeatureBackbone& backbone, const BackboneSpec& spec) {
    const auto named = backbone.named_parameters();
    const std::string key = "backbone.freeze";
    const std::string which =
        spec.kind == "torchscript" ? spec.script : "the " + spec.kind + " backbone";
    std::set<std::string> chosen;
    if (spec.freeze_all) {
        for (const auto& [name, p] : named) chosen.insert(name);
    } else if (!spec.freeze_names.empty()) {
        for (const auto& want : spec.freeze_names) {
            const bool found = std::any_of(named.begin(), named.end(),
                                           [&](const auto& p) { return p.first == want; });
            if (!found)
                throw SpecError(key, which + " has no parameter '" + want + "' (it has " +
                                         some_parameter_names(named) + ")");
            chosen.insert(want);
        }
    } else if (!spec.freeze_regex.empty()) {
        const std::regex pattern(spec.freeze_regex);
        for (const auto& [name, p] : named)
            if (std::regex_match(name, pattern)) chosen.insert(name);
        if (chosen.empty())
            throw SpecError(key, "'" + spec.freeze_regex + "' matches none of the parameters of " +
                                     which + " (" + some_parameter_names(named) + ")");
    }
    FreezeResolution r;
    r.parameters = static_cast<int64_t>(named.size());
    for (const auto& [name, p] : named) {
        r.elements += p.numel();
        const bool by_file = !p.requires_grad();
        if (by_file) r.by_file.push_back(name);
        if (!by_file && !chosen.count(name)) continue;
        p.requires_grad_(false);
        r.frozen.push_back(name);
        r.frozen_elements += p.numel();
    }
    return r;
}

nlohmann::json to_json(const FreezeResolution& r) {
    return {{"frozen", r.frozen},         {"by_file", r.by_file},
            {"parameters", r.parameters}, {"frozen_elements", r.frozen_elements},
            {"elements", r.elements},     {"linear_probe", r.linear_probe()}};
}

}  // namespace liftlab
