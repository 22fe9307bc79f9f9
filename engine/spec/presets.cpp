#include "spec/presets.h"

#include <cstdlib>
#include <filesystem>

#include "core/bounded_input.h"
#include "core/errors.h"
#include "liftlab_config.h"
#include "spec/embedded_presets.h"

namespace liftlab {

std::string resource_dir() {
    if (const char* env = std::getenv("LIFTLAB_RESOURCE_DIR"); env && *env) return env;
    // An installed program (cmake --install, the .deb): <prefix>/bin/liftlab-cli reads
    // <prefix>/share/liftlab, wherever the prefix is; a build tree has no such folder.
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const std::filesystem::path installed =
            (exe.parent_path() / LIFTLAB_RESOURCE_DIR_FROM_BIN).lexically_normal();
        if (std::filesystem::is_directory(installed / "models", ec)) return installed.string();
    }
    return LIFTLAB_RESOURCE_DIR;
}

namespace {

// A built-in preset names its model file relative to resources/ ("models/x.pt"); the spec then
// holds the absolute path, wherever the program runs from.
void resolve_resource_paths(nlohmann::json& spec) {
    for (const char* section : {"backbone", "icnn"}) {
        if (!spec.contains(section) || !spec[section].is_object()) continue;
        auto& s = spec[section];
        if (!s.contains("script") || !s["script"].is_string()) continue;
        const std::string path = s["script"].get<std::string>();
        if (!path.empty() && !std::filesystem::path(path).is_absolute())
            s["script"] =
                (std::filesystem::path(resource_dir()) / path).lexically_normal().string();
    }
}

}  // namespace

const std::vector<Preset>& builtin_presets() {
    static const std::vector<Preset> presets = [] {
        std::vector<Preset> out;
        for (const auto& [file, text] : embedded_preset_texts()) {
            Preset p;
            try {
                p.spec = nlohmann::json::parse(text);
            } catch (const nlohmann::json::parse_error& e) {
                throw DataError("resources/presets/" + file, 0, e.what());
            }
            resolve_resource_paths(p.spec);
            p.name = p.spec.value("name", file);
            p.description = p.spec.value("description", "");
            out.push_back(std::move(p));
        }
        return out;
    }();
    return presets;
}

nlohmann::json load_spec_source(const std::string& name_or_path) {
    namespace fs = std::filesystem;
    const bool looks_like_file =
        name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json";
    if (fs::exists(name_or_path) || looks_like_file) {
        // Regular files only (a FIFO would block), bounded size and nesting.
        return read_json_file(name_or_path);
    }
    for (const auto& p : builtin_presets())
        if (p.name == name_or_path) return p.spec;
    std::string names;
    for (const auto& p : builtin_presets()) names += (names.empty() ? "" : ", ") + p.name;
    throw SpecError("preset",
                    "no preset or spec file named '" + name_or_path + "' (presets: " + names + ")");
}

}  // namespace liftlab
