#include "spec/presets.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.h"
#include "spec/embedded_presets.h"

namespace liftlab {

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
        std::ifstream in(name_or_path);
        if (!in) throw DataError(name_or_path, 0, "cannot open spec file");
        std::stringstream ss;
        ss << in.rdbuf();
        try {
            return nlohmann::json::parse(ss.str());
        } catch (const nlohmann::json::parse_error& e) {
            // e.byte is the offset of the error; turn it into a line number.
            const std::string text = ss.str();
            const size_t upto = std::min<size_t>(e.byte, text.size());
            const int line =
                1 + static_cast<int>(std::count(text.begin(), text.begin() + upto, '\n'));
            throw DataError(name_or_path, line, "invalid JSON");
        }
    }
    for (const auto& p : builtin_presets())
        if (p.name == name_or_path) return p.spec;
    std::string names;
    for (const auto& p : builtin_presets()) names += (names.empty() ? "" : ", ") + p.name;
    throw SpecError("preset",
                    "no preset or spec file named '" + name_or_path + "' (presets: " + names + ")");
}

}  // namespace liftlab
