// SHA-256 of bytes as 64 lowercase hex digits (OpenSSL): the users' model files recorded in
// spec.json, and the spec a resume state was saved under.
#pragma once
#include <string>

namespace liftlab {

std::string hex_sha256(const std::string& bytes);

}  // namespace liftlab
