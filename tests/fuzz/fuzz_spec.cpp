// libFuzzer target: the spec reader with --set overrides. Input: spec JSON text, optionally
// followed by a NUL byte and newline-separated `key=value` assignments. Only SpecError and
// DataError may come out (anything else is a finding), and an accepted spec must round-trip
// through to_json exactly.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/bounded_input.h"
#include "core/errors.h"
#include "spec/experiment_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    const auto nul = input.find('\0');
    const std::string text = input.substr(0, nul);
    try {
        nlohmann::json j = liftlab::parse_json_bounded(text, "fuzz.json");
        if (nul != std::string::npos) {
            size_t start = nul + 1;
            while (start <= input.size()) {
                const auto nl = input.find('\n', start);
                const std::string line =
                    input.substr(start, nl == std::string::npos ? nl : nl - start);
                if (!line.empty()) liftlab::apply_override(j, line);
                if (nl == std::string::npos) break;
                start = nl + 1;
            }
        }
        const auto spec = liftlab::parse_spec(j);
        const auto once = liftlab::to_json(spec);
        if (liftlab::to_json(liftlab::parse_spec(once)) != once) std::abort();
        (void)liftlab::parse_recorded_spec(once);
    } catch (const liftlab::SpecError&) {
    } catch (const liftlab::DataError&) {
    }
    return 0;
}
