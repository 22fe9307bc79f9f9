// Built-in presets (resources/presets/*.json, embedded at build time) and spec loading.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace liftlab {

struct Preset {
    std::string name;
    std::string description;
    nlohmann::json spec;
};

// A preset's backbone.script / icnn.script relative to resources/ (e.g. "models/x.pt") is
// resolved against resource_dir() when the presets are read.
const std::vector<Preset>& builtin_presets();

// $LIFTLAB_RESOURCE_DIR when set; else, for an installed program, <prefix>/share/liftlab beside
// its bin/ (found from /proc/self/exe); else resources/ of the source tree this build came from.
std::string resource_dir();

// `name_or_path` is a path to a spec JSON file when such a file exists (or it ends in .json),
// else the name of a built-in preset. Throws SpecError (unknown preset) or DataError (bad file).
nlohmann::json load_spec_source(const std::string& name_or_path);

}  // namespace liftlab
