#include "passive_openmp.h"

#include <unistd.h>
#include <cstdlib>

namespace liftlab {

void ensure_passive_openmp(char** argv) {
    if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;  // the user's choice wins
    ::setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0);
    ::execv("/proc/self/exe", argv);
    // execv only returns on failure: carry on with the spinning default.
}

}  // namespace liftlab
