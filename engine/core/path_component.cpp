#include "core/path_component.h"

namespace liftlab {

namespace {

constexpr std::size_t kMaxComponentLength = 200;  // well below NAME_MAX (255) with suffixes

bool allowed(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '@' || c == '=';
}

}  // namespace

bool is_safe_path_component(const std::string& name) {
    if (name.empty() || name.size() > kMaxComponentLength || name == "." || name == "..")
        return false;
    for (char c : name)
        if (!allowed(c)) return false;
    return true;
}

std::string to_safe_path_component(const std::string& name) {
    std::string out = name.substr(0, kMaxComponentLength);
    for (char& c : out)
        if (!allowed(c)) c = '_';
    if (out.empty() || out == "." || out == "..") out = "_";
    return out;
}

}  // namespace liftlab
