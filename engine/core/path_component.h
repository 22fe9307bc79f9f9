// Names that become file or folder names (the run name, method labels) must stay where they are
// put: one path component of letters, digits and `-_.@=`, not "." or "..", so a spec cannot write
// outside --out or outside its run folder.
#pragma once
#include <string>

namespace liftlab {

// True for a non-empty name of at most 200 characters from [A-Za-z0-9-_.@=], not "." or "..".
bool is_safe_path_component(const std::string& name);

// `name` with every other character replaced by '_' (and "." / ".." / "" by "_"): for names that
// embed free text, such as a sweep value. The identity on safe components.
std::string to_safe_path_component(const std::string& name);

}  // namespace liftlab
