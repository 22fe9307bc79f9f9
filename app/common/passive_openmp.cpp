#include "passive_openmp.h"

#include <unistd.h>
#include <cstdlib>
#include <string>

#include "core/blas_core.h"

namespace liftlab {

void ensure_passive_openmp(char** argv) {
    bool changed = false;
    if (std::getenv("OMP_WAIT_POLICY") == nullptr) {  // the user's choice wins
        ::setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0);
        changed = true;
    }
    if (const std::string core = better_blas_core(); !core.empty()) {
        ::setenv("OPENBLAS_CORETYPE", core.c_str(), /*overwrite=*/0);
        changed = true;
    }
    if (!changed) return;
    ::execv("/proc/self/exe", argv);
    // execv only returns on failure: carry on with the defaults.
}

}  // namespace liftlab
