#include "core/compute_threads.h"

#include <dlfcn.h>
#include <torch/torch.h>

#include <algorithm>

namespace liftlab {

namespace {

using SetThreads = void (*)(int);
using GetThreads = int (*)();

// LibTorch links the system BLAS (Debian: OpenBLAS through libblas.so.3); look its controls up
// in the already loaded libraries rather than linking OpenBLAS ourselves.
template <typename F>
F openblas_symbol(const char* name) {
    return reinterpret_cast<F>(::dlsym(RTLD_DEFAULT, name));
}

}  // namespace

void set_compute_threads(int n) {
    n = std::max(1, n);
    torch::set_num_threads(n);
    // Subnormal floats flushed to zero (FTZ and DAZ): an ICNN's softplus far outside the data
    // makes exp() underflow into subnormals, which cost ~100 cycles each on x86 — the first
    // hundreds of icnn-ebm-1d steps ran 3–4× slower (issue 12). The setting is per thread
    // (MXCSR); threads started afterwards inherit it (POSIX: the floating-point environment of
    // pthread_create), so the runner's and the landscape's workers get it too.
    at::globalContext().setFlushDenormal(true);
    static const auto set_blas = openblas_symbol<SetThreads>("openblas_set_num_threads");
    if (set_blas) set_blas(n);
}

int blas_threads() {
    static const auto get_blas = openblas_symbol<GetThreads>("openblas_get_num_threads");
    return get_blas ? get_blas() : -1;
}

}  // namespace liftlab
