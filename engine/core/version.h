// Versions recorded in every run folder so a result can be reproduced.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace liftlab {

std::string liftlab_version();
// {"liftlab": ..., "libtorch": ..., "compiler": ..., "nlohmann_json": ..., "blas": ...}
nlohmann::json version_info();

}  // namespace liftlab
