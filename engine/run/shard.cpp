#include "run/shard.h"

#include <stdexcept>

namespace liftlab {

Shard parse_shard(const std::string& text) {
    const auto bad = [&] {
        return std::invalid_argument("--shard needs K/N with 0 ≤ K < N (e.g. 0/4), got '" + text +
                                     "'");
    };
    const auto slash = text.find('/');
    if (slash == std::string::npos) throw bad();
    Shard s;
    try {
        size_t used_k = 0, used_n = 0;
        s.index = std::stoi(text.substr(0, slash), &used_k);
        s.count = std::stoi(text.substr(slash + 1), &used_n);
        if (used_k != slash || used_n != text.size() - slash - 1) throw bad();
    } catch (const std::invalid_argument&) {
        throw bad();
    } catch (const std::out_of_range&) {
        throw bad();
    }
    if (s.count < 1 || s.index < 0 || s.index >= s.count) throw bad();
    return s;
}

}  // namespace liftlab
