// FNO-1d backbone for operator learning (docs/methods.md §8.3;
// Li et al. 2021, reference fourier_1d.py). Input u0 on s grid points plus the grid
// coordinate → pointwise lift to `width` → `layers` Fourier layers σ(W x + K x) → pointwise
// projection width → `projection` with GELU. forward() returns these features (n, s, projection):
// the reference's final projection→1 layer is the last layer LiftLab solves in closed form, with
// every grid point a sample, so it is not part of this module.
#pragma once
#include <torch/torch.h>

namespace liftlab {

struct SpectralConv1dOptions {
    SpectralConv1dOptions(int64_t in_channels, int64_t out_channels, int64_t modes)
        : in_channels_(in_channels), out_channels_(out_channels), modes_(modes) {}
    TORCH_ARG(int64_t, in_channels);
    TORCH_ARG(int64_t, out_channels);
    TORCH_ARG(int64_t, modes);  // lowest Fourier modes kept (k = 0 … modes − 1)
};

// K x = irfft(R · rfft(x)) where R (in × out × modes, complex) acts on the lowest `modes` modes
// and zeroes the rest. R is stored as two real parameters so optimizers, to(dtype) and the
// closed-form machinery only ever see real tensors, mode-major (modes, in, out) so each mode's
// mixing block is contiguous. Init as the reference: real and imaginary parts each
// scale·U[0, 1) with scale = 1/(in·out), drawn in the reference's (in, out, modes) order. The
// transforms are thin products with the truncated DFT matrices of the grid (exact: the same sums
// as rfft/irfft of the kept modes; with modes ≪ s far cheaper, above all in the backward pass).
class SpectralConv1dImpl : public torch::nn::Module {
public:
    explicit SpectralConv1dImpl(const SpectralConv1dOptions& options);
    // x: (n, in_channels, s) → (n, out_channels, s). Throws std::invalid_argument when modes
    // exceeds the s/2 + 1 modes of the input grid.
    torch::Tensor forward(const torch::Tensor& x);
    // The same map on channels-last input: x (n, s, in_channels) → (n, s, out_channels), the
    // layout Fno1d keeps throughout.
    torch::Tensor forward_channels_last(const torch::Tensor& x);

    torch::Tensor weight_real;  // (modes, in, out): R[i, o, k] is weight[k][i][o]
    torch::Tensor weight_imag;  // (modes, in, out)

private:
    SpectralConv1dOptions options_;
};
TORCH_MODULE(SpectralConv1d);

struct Fno1dOptions {
    TORCH_ARG(int64_t, modes) = 16;
    TORCH_ARG(int64_t, width) = 64;
    TORCH_ARG(int64_t, layers) = 4;
    TORCH_ARG(int64_t, projection) = 128;    // feature dimension d seen by the last layer
    TORCH_ARG(int64_t, input_channels) = 1;  // fields in the input besides the grid coordinate
};

// Lift, pointwise W and projection use LibTorch's default init, as the reference uses PyTorch's
// defaults; W is the reference's 1×1 Conv1d written as a Linear over channels-last points (the
// same initial values, one matrix product over all n·s points). GELU follows every Fourier layer
// except the last (as the reference). The grid channel is x_j = j/s, the periodic grid of the data
// (the reference uses linspace(0, 1, s), which repeats the point x = 0 at x = 1).
class Fno1dImpl : public torch::nn::Module {
public:
    explicit Fno1dImpl(const Fno1dOptions& options = {});
    // x: (n, s) when input_channels is 1, or (n, s, input_channels) → features (n, s, projection).
    torch::Tensor forward(torch::Tensor x);
    int64_t feature_dim() const { return options_.projection(); }

private:
    Fno1dOptions options_;
    torch::nn::Linear lift_{nullptr};
    torch::nn::ModuleList spectral_;
    torch::nn::ModuleList pointwise_;
    torch::nn::Linear project_{nullptr};
};
TORCH_MODULE(Fno1d);

}  // namespace liftlab
