#include "core/blas_core.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace liftlab {

std::string blas_core_name() {
    using CoreName = char* (*)();
    const auto f = reinterpret_cast<CoreName>(::dlsym(RTLD_DEFAULT, "openblas_get_corename"));
    const char* name = f ? f() : nullptr;
    return name ? name : "";
}

std::string better_blas_core() {
    if (std::getenv("OPENBLAS_CORETYPE")) return "";
    if (const char* keep = std::getenv("LIFTLAB_BLAS_CORETYPE");
        keep && std::strcmp(keep, "keep") == 0)
        return "";
    if (blas_core_name() != "Prescott") return "";
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return "";
}

}  // namespace liftlab
