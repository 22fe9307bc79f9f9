#include "passive_openmp.h"

#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <cstdlib>
#include <cstring>
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
    if (!changed) {
#if defined(__linux__)
        // Re-executed through /proc/self/exe the process is called "exe" in ps, top and
        // killall: give it its own name back.
        if (argv && argv[0]) {
            const char* slash = std::strrchr(argv[0], '/');
            ::prctl(PR_SET_NAME, slash ? slash + 1 : argv[0], 0, 0, 0);
        }
#endif
        return;
    }
    ::execv("/proc/self/exe", argv);
    // execv only returns on failure: carry on with the defaults.
}

}  // namespace liftlab
