// Generated at configure time from resources/presets/*.json (cmake/EmbedPresets.cmake).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace liftlab {
// (file name, JSON text) of every built-in preset, sorted by file name.
const std::vector<std::pair<std::string, std::string>>& embedded_preset_texts();
}  // namespace liftlab
