#include "core/blas_core.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace liftlab {

std::string blas_core_name() {
    using CoreName = char* (*)();
    const auto f = reinterpret_cast<CoreName>(::dlsym(RTLD_DEFAULT, "openblas_get_corename"));
    const char* name = f ? f() : nullptr;
    return name ? name : "";
}

CpuVectorUnits cpu_vector_units() {
    CpuVectorUnits cpu;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    cpu.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    cpu.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    return cpu;
}

namespace {

// Widest vector unit an OpenBLAS x86-64 kernel set uses: 3 AVX-512, 2 AVX2 + FMA, 1 narrower or
// unknown. Names as openblas_get_corename() prints them, compared without case.
int kernel_width_rank(std::string name) {
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name == "skylakex" || name == "cooperlake" || name == "sapphirerapids") return 3;
    if (name == "haswell" || name == "zen") return 2;
    return 1;
}

}  // namespace

std::string better_blas_core_for(const std::string& current, CpuVectorUnits cpu) {
    if (current.empty()) return "";  // not OpenBLAS
    const std::string wanted = cpu.avx512 ? "SkylakeX" : cpu.avx2_fma ? "Haswell" : "";
    if (wanted.empty()) return "";
    return kernel_width_rank(current) < kernel_width_rank(wanted) ? wanted : "";
}

std::string better_blas_core() {
    if (std::getenv("OPENBLAS_CORETYPE")) return "";
    const std::string current = blas_core_name();
    if (const char* asked = std::getenv("LIFTLAB_BLAS_CORETYPE"); asked && *asked) {
        if (std::strcmp(asked, "keep") == 0 || current.empty()) return "";
        // Only a core whose vector unit this CPU has (a wider one would stop on an illegal
        // instruction).
        const auto cpu = cpu_vector_units();
        const int widest = cpu.avx512 ? 3 : cpu.avx2_fma ? 2 : 1;
        return kernel_width_rank(asked) <= widest ? std::string(asked) : "";
    }
    return better_blas_core_for(current, cpu_vector_units());
}

BlasChoice blas_choice() {
    auto env = [](const char* name) {
        const char* v = std::getenv(name);
        return std::string(v ? v : "");
    };
    BlasChoice c;
    const std::string requested = env(kBlasRequestedVariable);
    const std::string check = env(kBlasCheckVariable);
    if (!requested.empty()) {
        c.source = check.rfind("failed", 0) == 0 ? "liftlab-fallback" : "liftlab";
        c.detected = env(kBlasDetectedVariable);
        c.requested = requested;
        c.self_check = check;
    } else {
        c.source = std::getenv("OPENBLAS_CORETYPE") ? "environment" : "openblas";
    }
    return c;
}

}  // namespace liftlab
