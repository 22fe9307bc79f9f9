#include "core/blas_lapack.h"

#include <dlfcn.h>

namespace liftlab {

namespace {

template <typename F>
bool find(F& f, const char* name) {
    f = reinterpret_cast<F>(::dlsym(RTLD_DEFAULT, name));
    return f != nullptr;
}

}  // namespace

const BlasLapack* blas_lapack() {
    static const BlasLapack* const routines = []() -> const BlasLapack* {
        static BlasLapack r;
        const bool all = find(r.sgemm, "sgemm_") && find(r.dsyrk, "dsyrk_") &&
                         find(r.dgemm, "dgemm_") && find(r.dpotrf, "dpotrf_") &&
                         find(r.dpotrs, "dpotrs_");
        return all ? &r : nullptr;
    }();
    return routines;
}

}  // namespace liftlab
