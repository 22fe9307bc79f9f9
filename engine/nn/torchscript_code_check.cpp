#include "nn/torchscript_code_check.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

namespace liftlab {

namespace {

// The plain assignments PyTorch writes in a class body: its metadata lists.
bool is_class_metadata(const std::string& name) {
    static const std::vector<std::string> metadata = {"__parameters__", "__buffers__",
                                                      "__annotations__", "__forward_pre_hooks__",
                                                      "__forward_hooks__"};
    return std::find(metadata.begin(), metadata.end(), name) != metadata.end();
}

// The name assigned (`name = …`, not `name == …` nor `name : T = …`) by a line whose statement
// starts at `indent`, or "".
std::string assigned_name(const std::string& line, size_t indent) {
    size_t k = indent;
    while (k < line.size() && (std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '_'))
        ++k;
    if (k == indent) return {};
    const std::string name = line.substr(indent, k - indent);
    while (k < line.size() && (line[k] == ' ' || line[k] == '\t')) ++k;
    const bool assigned =
        k < line.size() && line[k] == '=' && (k + 1 == line.size() || line[k + 1] != '=');
    return assigned ? name : std::string();
}

}  // namespace

std::string code_problem(const std::string& code) {
    std::istringstream in(code);
    std::string line;
    int number = 0;
    bool checked = false;     // inside a class whose body is checked
    std::string body_indent;  // its body's indentation, once seen
    while (std::getline(in, line)) {
        ++number;
        const size_t indent = line.find_first_not_of(" \t");
        if (indent == std::string::npos || line[indent] == '#' || line[indent] == '\r') continue;
        if (indent == 0) {
            // `class Name(Base):` — an Enum's members are plain assignments
            checked = line.rfind("class ", 0) == 0 && line.find("(Enum)") == std::string::npos;
            body_indent.clear();
            continue;
        }
        if (!checked) continue;
        if (body_indent.empty()) body_indent = line.substr(0, indent);
        if (line.compare(0, indent, body_indent) != 0 || indent != body_indent.size()) continue;
        const std::string name = assigned_name(line, indent);
        if (!name.empty() && !is_class_metadata(name))
            return "line " + std::to_string(number) + ": a class constant '" + name +
                   "' without its Final[…] annotation";
    }
    return {};
}

}  // namespace liftlab
