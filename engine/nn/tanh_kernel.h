#pragma once
// tanh over a float32 array, vectorised (AVX-512 / AVX2 clones picked at load time) and within a
// few units in the last place of the exact value: LibTorch's float32 tanh (Sleef's 1-ulp AVX2
// routine) cost 2.8 ns per element on this VM — more than the matrix products of a 128-wide tanh
// MLP's forward pass. Compiled apart from LibTorch (-O3, no PCH). No errno, no exceptions;
// NaN in gives NaN out, ±inf gives ±1.
#include <cstdint>

namespace liftlab {

void tanh_kernel(const float* x, float* y, int64_t n);

}  // namespace liftlab
