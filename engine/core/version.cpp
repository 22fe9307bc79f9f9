#include "core/version.h"

#include <torch/version.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/blas_core.h"
#include "liftlab_config.h"

namespace liftlab {

std::string liftlab_version() {
    return LIFTLAB_VERSION_STRING;
}

namespace {
// The BLAS LibTorch resolves at run time through Debian's alternatives (libblas.so.3).
std::string blas_library() {
    char buf[4096];
    ssize_t n = readlink("/etc/alternatives/libblas.so.3-x86_64-linux-gnu", buf, sizeof(buf) - 1);
    if (n <= 0) return "unknown";
    buf[n] = '\0';
    return buf;
}
nlohmann::json blas_choice_json() {
    const BlasChoice c = blas_choice();
    nlohmann::json j = {{"source", c.source}};
    if (const char* env = std::getenv("OPENBLAS_CORETYPE")) j["OPENBLAS_CORETYPE"] = env;
    if (!c.requested.empty()) {
        j["detected"] = c.detected;
        j["requested"] = c.requested;
        j["self_check"] = c.self_check;
    }
    return j;
}
}  // namespace

nlohmann::json version_info() {
    std::ostringstream compiler;
#if defined(__clang__)
    compiler << "clang " << __clang_major__ << "." << __clang_minor__ << "."
             << __clang_patchlevel__;
#elif defined(__GNUC__)
    compiler << "gcc " << __GNUC__ << "." << __GNUC_MINOR__ << "." << __GNUC_PATCHLEVEL__;
#else
    compiler << "unknown";
#endif
    return {{"liftlab", liftlab_version()},
            {"libtorch", TORCH_VERSION},
            {"compiler", compiler.str()},
            {"nlohmann_json", std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                                  std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                                  std::to_string(NLOHMANN_JSON_VERSION_PATCH)},
            {"blas", blas_library()},
            {"blas_core", blas_core_name()},
            {"blas_choice", blas_choice_json()}};
}

}  // namespace liftlab
