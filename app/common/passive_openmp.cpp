#include "passive_openmp.h"

#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/blas_core.h"
#include "core/blas_self_check.h"

namespace liftlab {

namespace {

// Kernels LiftLab asked for are used only after they agree with plain loops (a wrong-result
// OpenBLAS kernel must never give a wrong number): checked once, in the re-executed process
// that runs on them; on a disagreement, back to the core OpenBLAS detected (one more re-exec).
// LIFTLAB_BLAS_SELF_CHECK=wrong-reference checks against a deliberately wrong reference, so
// tests can see the fallback taken.
void check_requested_kernels(char** argv) {
    const char* requested = std::getenv(kBlasRequestedVariable);
    const char* core = std::getenv("OPENBLAS_CORETYPE");
    if (!requested || std::getenv(kBlasCheckVariable) || !core || std::strcmp(requested, core) != 0)
        return;
    const char* mode = std::getenv("LIFTLAB_BLAS_SELF_CHECK");
    const bool wrong = mode && std::strcmp(mode, "wrong-reference") == 0;
    const BlasSelfCheck check =
        blas_self_check(wrong ? wrong_blas_reference() : plain_blas_reference());
    if (check.passed) {
        ::setenv(kBlasCheckVariable, ("passed: " + check.summary).c_str(), 1);
        return;
    }
    const char* detected = std::getenv(kBlasDetectedVariable);
    ::setenv(kBlasCheckVariable, ("failed: " + check.summary).c_str(), 1);
    if (!detected || !*detected) return;  // nothing to go back to: keep going, recorded
    ::setenv("OPENBLAS_CORETYPE", detected, 1);
    ::execv("/proc/self/exe", argv);
}

}  // namespace

void ensure_passive_openmp(char** argv) {
    bool changed = false;
    if (std::getenv("OMP_WAIT_POLICY") == nullptr) {  // the user's choice wins
        ::setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0);
        changed = true;
    }
    if (const std::string core = better_blas_core(); !core.empty()) {
        ::setenv(kBlasDetectedVariable, blas_core_name().c_str(), 1);
        ::setenv(kBlasRequestedVariable, core.c_str(), 1);
        ::setenv("OPENBLAS_CORETYPE", core.c_str(), /*overwrite=*/0);
        changed = true;
    }
    if (!changed) {
        check_requested_kernels(argv);
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
