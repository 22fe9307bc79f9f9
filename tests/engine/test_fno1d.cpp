// The FNO-1d backbone (docs/methods.md §8.3): feature shapes at two
// resolutions, the spectral convolution on a known input, bad mode counts, and gradient flow.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "nn/fno1d.h"
#include "test_helpers.h"

using liftlab::Fno1d;
using liftlab::Fno1dOptions;
using liftlab::SpectralConv1d;
using liftlab::SpectralConv1dOptions;
using liftlab::test::relative_error;

namespace {
using liftlab::kPi;
using liftlab::test::kF64;

torch::Tensor wave(int64_t s, int64_t k, bool sine) {
    auto x = 2 * kPi * static_cast<double>(k) * torch::arange(s, kF64) / static_cast<double>(s);
    return sine ? torch::sin(x) : torch::cos(x);
}

int64_t parameter_count(torch::nn::Module& m) {
    int64_t count = 0;
    for (const auto& p : m.parameters()) count += p.numel();
    return count;
}
}  // namespace

TEST(Fno1d, FeaturesHaveShapeNBySByProjectionAtAnyResolution) {
    Fno1d net;  // defaults: modes 16, width 64, 4 layers, projection 128
    EXPECT_EQ(net->feature_dim(), 128);
    for (int64_t s : {64, 128}) {
        auto features = net->forward(torch::randn({3, s}));
        EXPECT_EQ(features.sizes(), torch::IntArrayRef({3, s, 128})) << "s=" << s;
        EXPECT_TRUE(torch::isfinite(features).all().item<bool>());
    }
    // The parameter count does not depend on s: lift (2→64), 4 × (spectral 64·64·16 complex +
    // 1×1 conv 64→64), projection 64→128.
    const int64_t expected =
        (2 * 64 + 64) + 4 * (2 * 64 * 64 * 16 + 64 * 64 + 64) + (64 * 128 + 128);
    EXPECT_EQ(parameter_count(*net), expected);
}

TEST(Fno1d, SpectralLayerKeepsOnlyItsMode) {
    // With only R[0, 0, 3] = a + ib nonzero, K maps sin(2π·3x) to a sin(2π·3x) + b cos(2π·3x)
    // and removes every other mode (here a constant and cos(2π·5x)). Float64: tolerance 1e-12.
    const int64_t s = 32;
    const double a = 0.7, b = -1.3;
    SpectralConv1d conv(SpectralConv1dOptions(/*in=*/1, /*out=*/1, /*modes=*/8));
    conv->to(torch::kFloat64);
    {
        torch::NoGradGuard no_grad;
        conv->weight_real.zero_();
        conv->weight_imag.zero_();
        conv->weight_real[3][0][0] = a;  // (mode, in, out)
        conv->weight_imag[3][0][0] = b;
    }
    auto input = (wave(s, 3, true) + wave(s, 5, false) + 0.4).view({1, 1, s});
    auto expected = (a * wave(s, 3, true) + b * wave(s, 3, false)).view({1, 1, s});
    EXPECT_LT(relative_error(conv->forward(input), expected), 1e-12);

    // Channel mixing: R[i = 1, o = 0, 3] = 1 copies mode 3 of input channel 1 to output channel 0.
    SpectralConv1d mix(SpectralConv1dOptions(/*in=*/2, /*out=*/2, /*modes=*/8));
    mix->to(torch::kFloat64);
    {
        torch::NoGradGuard no_grad;
        mix->weight_real.zero_();
        mix->weight_imag.zero_();
        mix->weight_real[3][1][0] = 1.0;
    }
    auto two = torch::stack({wave(s, 2, true), wave(s, 3, false) + wave(s, 6, true)}).unsqueeze(0);
    auto out = mix->forward(two);
    EXPECT_LT(relative_error(out[0][0], wave(s, 3, false)), 1e-12);
    EXPECT_LT(out[0][1].abs().max().item<double>(), 1e-14);
}

namespace {
// The definition the layer implements (the reference's SpectralConv1d): rfft, the complex product
// R·X on the lowest `modes` modes, zero above, irfft back to s points.
torch::Tensor spectral_by_fft(const torch::Tensor& x, const torch::Tensor& wr,
                              const torch::Tensor& wi, int64_t modes) {
    const int64_t s = x.size(2);
    auto xf = torch::fft::rfft(x).narrow(/*dim=*/-1, /*start=*/0, modes);
    auto w = torch::complex(wr, wi);
    auto yf = torch::einsum("bix,xio->box", {xf, w});  // weights (modes, in, out)
    yf = torch::constant_pad_nd(yf, {0, s / 2 + 1 - modes});
    return torch::fft::irfft(yf, s);
}
}  // namespace

TEST(Fno1d, SpectralLayerEqualsTheFftDefinitionWithItsGradients) {
    // The layer computes rfft and irfft as thin products with the truncated DFT matrices; against
    // the FFT definition above, on even and odd grids, one mode, some, and every mode up to s/2
    // (the Nyquist mode of an even grid, whose sine row vanishes and whose weight is 1/s): outputs
    // and the gradients of a fixed functional with respect to the input and both weight tensors
    // agree to 1e-12 relative in float64; in float32 the outputs agree to 1e-5.
    torch::manual_seed(3);
    for (const int64_t s : {32, 33}) {
        for (const int64_t modes : {int64_t{1}, int64_t{5}, s / 2 + 1}) {
            SpectralConv1d conv(SpectralConv1dOptions(/*in=*/3, /*out=*/2, modes));
            conv->to(torch::kFloat64);
            const auto x = torch::randn({4, 3, s}, kF64).requires_grad_(true);
            const auto probe = torch::randn({4, 2, s}, kF64);
            const auto ours = conv->forward(x);
            const auto reference = spectral_by_fft(x, conv->weight_real, conv->weight_imag, modes);
            const std::string where = "s=" + std::to_string(s) + " modes=" + std::to_string(modes);
            EXPECT_LT(relative_error(ours, reference), 1e-12) << where;
            const auto grads_ours = torch::autograd::grad(
                {(ours * probe).sum()}, {x, conv->weight_real, conv->weight_imag});
            const auto grads_ref = torch::autograd::grad({(reference * probe).sum()},
                                                         {x, conv->weight_real, conv->weight_imag});
            for (size_t k = 0; k < grads_ours.size(); ++k) {
                EXPECT_LT(relative_error(grads_ours[k], grads_ref[k]), 1e-12)
                    << where << " gradient " << k;
            }
            conv->to(torch::kFloat32);
            const auto x32 = x.detach().to(torch::kFloat32);
            EXPECT_LT(
                relative_error(conv->forward(x32).to(torch::kFloat64),
                               spectral_by_fft(x32, conv->weight_real, conv->weight_imag, modes)
                                   .to(torch::kFloat64)),
                1e-5)
                << where << " float32";
        }
    }
}

TEST(Fno1d, PointwiseLinearStartsAsTheReferencesOneByOneConvolution) {
    // The pointwise map is a Linear over channels-last points; the reference's is a Conv1d with
    // kernel 1. From the same seed both draw the same weights and biases, and map the same input
    // to the same output (float32, 1e-6 relative).
    torch::manual_seed(11);
    torch::nn::Conv1d conv(torch::nn::Conv1dOptions(8, 6, /*kernel_size=*/1));
    torch::manual_seed(11);
    torch::nn::Linear linear(8, 6);
    EXPECT_TRUE(torch::equal(conv->weight.squeeze(-1), linear->weight));
    EXPECT_TRUE(torch::equal(conv->bias, linear->bias));
    const auto x = torch::randn({3, 8, 20});
    EXPECT_LT(relative_error(conv->forward(x), linear->forward(x.transpose(1, 2)).transpose(1, 2)),
              1e-6);
}

TEST(Fno1d, SpectralLayerIsResolutionInvariant) {
    // rfft unnormalised, irfft scaled by 1/s: a band-limited input sampled at s = 32 and s = 64
    // gives the same output function, compared at the common points (float64, 1e-12 relative).
    SpectralConv1d conv(SpectralConv1dOptions(/*in=*/2, /*out=*/3, /*modes=*/8));
    conv->to(torch::kFloat64);
    auto sample = [](int64_t s) {
        return torch::stack({wave(s, 1, true) + 0.5 * wave(s, 4, false), wave(s, 7, true) - 0.2})
            .unsqueeze(0);
    };
    auto coarse = conv->forward(sample(32));
    auto fine = conv->forward(sample(64));
    EXPECT_LT(relative_error(fine.slice(/*dim=*/2, 0, 64, 2), coarse), 1e-12);
}

TEST(Fno1d, ModesAboveHalfGridAreAnError) {
    // s = 16 has s/2 + 1 = 9 rfft modes: 9 works, 10 is a clear error.
    auto x = torch::randn({2, 1, 16});
    EXPECT_NO_THROW(SpectralConv1d(SpectralConv1dOptions(1, 1, /*modes=*/9))->forward(x));
    try {
        SpectralConv1d(SpectralConv1dOptions(1, 1, /*modes=*/10))->forward(x);
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("modes (10) exceeds the s/2 + 1 = 9"),
                  std::string::npos)
            << e.what();
    }
    Fno1d net(Fno1dOptions().width(4).projection(8));  // 16 modes
    EXPECT_THROW(net->forward(torch::randn({2, 16})), std::invalid_argument);
    EXPECT_THROW(Fno1d(Fno1dOptions().modes(0)), std::invalid_argument);
    EXPECT_THROW(net->forward(torch::randn({2, 32, 2})), std::invalid_argument);  // 1 channel
    // Channels-last input with the wrong channel count (or rank) is named, not a shape error from
    // deep inside a matrix product.
    SpectralConv1d three(SpectralConv1dOptions(3, 2, /*modes=*/4));
    try {
        three->forward_channels_last(torch::randn({2, 16, 5}));
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("must be (n, s, 3)"), std::string::npos) << e.what();
    }
    EXPECT_THROW(three->forward_channels_last(torch::randn({16, 3})), std::invalid_argument);
    EXPECT_NO_THROW(three->forward_channels_last(torch::randn({2, 16, 3})));
}

TEST(Fno1d, GradientsReachEveryParameter) {
    Fno1d net(Fno1dOptions().width(16).projection(32));
    auto features = net->forward(torch::randn({2, 64}));
    (features * torch::randn_like(features)).sum().backward();
    for (const auto& p : net->named_parameters()) {
        ASSERT_TRUE(p.value().grad().defined()) << p.key();
        EXPECT_GT(p.value().grad().norm().item<double>(), 0.0) << p.key();
    }
}

TEST(Fno1d, RunsInFloat64) {
    // FeatureBackbone::to(kFloat64) converts the module; the grid channel follows the input.
    Fno1d net(Fno1dOptions().width(8).projection(16).layers(2));
    net->to(torch::kFloat64);
    auto features = net->forward(torch::randn({2, 32}, kF64));
    EXPECT_EQ(features.scalar_type(), torch::kFloat64);
    EXPECT_EQ(features.sizes(), torch::IntArrayRef({2, 32, 16}));
}

namespace {
// Features of `net` and the gradient of Σ features·probe with respect to every parameter, by the
// module and by the reference's fourier_1d written with FFTs and 1×1 convolutions on
// channels-first tensors from the module's own parameters.
struct FnoComparison {
    double features = 0.0;        // relative error of the features
    double worst_gradient = 0.0;  // largest relative error over the parameters' gradients
    bool repeatable = false;      // the module's gradients are identical on a second pass
};

FnoComparison compare_with_reference_fno(Fno1d& net, const Fno1dOptions& o,
                                         const torch::Tensor& u) {
    const auto params = net->named_parameters();
    auto reference = [&](const torch::Tensor& x) {
        const int64_t n = x.size(0), s = x.size(1);
        auto grid = (torch::arange(s, x.options()) / static_cast<double>(s)).view({1, s, 1});
        auto h = torch::linear(torch::cat({x.unsqueeze(-1), grid.expand({n, s, 1})}, -1),
                               params["lift.weight"], params["lift.bias"])
                     .permute({0, 2, 1});
        for (int64_t i = 0; i < o.layers(); ++i) {
            const std::string k = std::to_string(i);
            auto y = spectral_by_fft(h, params["spectral." + k + ".weight_real"],
                                     params["spectral." + k + ".weight_imag"], o.modes()) +
                     torch::conv1d(h, params["pointwise." + k + ".weight"].unsqueeze(-1),
                                   params["pointwise." + k + ".bias"]);
            h = i + 1 < o.layers() ? torch::gelu(y) : y;
        }
        return torch::gelu(
            torch::linear(h.permute({0, 2, 1}), params["project.weight"], params["project.bias"]));
    };
    const auto probe = torch::randn({u.size(0), u.size(1), o.projection()}, u.options());
    std::vector<torch::Tensor> leaves;
    for (const auto& p : params) leaves.push_back(p.value());
    const auto ours = net->forward(u);
    const auto theirs = reference(u);
    FnoComparison result;
    result.features = relative_error(ours.to(torch::kFloat64), theirs.to(torch::kFloat64));
    const auto grads_ours = torch::autograd::grad({(ours * probe).sum()}, leaves);
    const auto grads_again = torch::autograd::grad({(net->forward(u) * probe).sum()}, leaves);
    const auto grads_ref = torch::autograd::grad({(theirs * probe).sum()}, leaves);
    result.repeatable = true;
    for (size_t k = 0; k < leaves.size(); ++k) {
        result.worst_gradient = std::max(
            result.worst_gradient,
            relative_error(grads_ours[k].to(torch::kFloat64), grads_ref[k].to(torch::kFloat64)));
        result.repeatable = result.repeatable && torch::equal(grads_ours[k], grads_again[k]);
    }
    return result;
}
}  // namespace

TEST(Fno1d, NetworkAndGradientsEqualTheReferenceArchitecture) {
    // Every hidden state feeds two branches (spectral and pointwise), so this also checks that
    // their gradients add up. Float64 on a small net: features and every parameter's gradient to
    // 1e-10 relative. Float32 at the preset's sizes (modes 16, width 64, 4 layers, 128 features,
    // a 256-point grid): 1e-4 relative, and a second backward pass gives identical gradients.
    torch::manual_seed(5);
    const auto small = Fno1dOptions().modes(6).width(8).layers(3).projection(5);
    Fno1d net64(small);
    net64->to(torch::kFloat64);
    const auto exact = compare_with_reference_fno(net64, small, torch::randn({4, 40}, kF64));
    EXPECT_LT(exact.features, 1e-10);
    EXPECT_LT(exact.worst_gradient, 1e-10);
    EXPECT_TRUE(exact.repeatable);

    const auto preset = Fno1dOptions();
    Fno1d net32(preset);
    const auto single = compare_with_reference_fno(net32, preset, torch::randn({6, 256}));
    EXPECT_LT(single.features, 1e-4);
    EXPECT_LT(single.worst_gradient, 1e-4);
    EXPECT_TRUE(single.repeatable);
}
