#pragma once
// tanh for the backbones' activations: float32 CPU tensors go through tanh_kernel (within 2.5 ulp
// of the exact value, ≈ 6× faster per element than LibTorch's here); anything else (float64,
// other devices) through torch::tanh. Differentiable like torch::tanh: the backward is
// at::tanh_backward on the saved output (so second derivatives work too).
#include <torch/torch.h>

namespace liftlab {

torch::Tensor fast_tanh(const torch::Tensor& x);

}  // namespace liftlab
