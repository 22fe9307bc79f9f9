// The activations' tanh (nn/fast_tanh.h, nn/tanh_kernel.h) against the exact function and
// against torch::tanh's derivatives.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "nn/fast_tanh.h"
#include "nn/mlp_backbone.h"
#include "nn/tanh_kernel.h"

namespace {

float from_bits(std::uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

// Error in units in the last place of the correctly rounded float result.
double ulp_error(float got, double exact) {
    const float rounded = static_cast<float>(exact);
    const double ulp = std::nextafter(std::fabs(rounded), std::numeric_limits<float>::infinity()) -
                       std::fabs(rounded);
    return std::fabs(static_cast<double>(got) - exact) / ulp;
}

}  // namespace

// Every 211th float from the smallest positive subnormal up to 11 (beyond 9, tanh is 1 in
// float32), both signs: within 3 ulp of tanh in double (measured worst: 2.40 ulp). Cutting the
// exponential's polynomial by one more term gives 6.7 ulp near x = 0.17.
TEST(TanhKernel, WithinThreeUlpOfTheExactValue) {
    std::vector<float> x;
    for (std::uint32_t b = 1; b < 0x41300000u; b += 211) {
        x.push_back(from_bits(b));
        x.push_back(-from_bits(b));
    }
    std::vector<float> y(x.size());
    liftlab::tanh_kernel(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0.0;
    float worst_x = 0.0f;
    for (size_t i = 0; i < x.size(); ++i) {
        const double e = ulp_error(y[i], std::tanh(static_cast<double>(x[i])));
        if (e > worst) {
            worst = e;
            worst_x = x[i];
        }
    }
    EXPECT_LE(worst, 3.0) << "at x = " << worst_x;
}

TEST(TanhKernel, SignsInfinitiesAndNaN) {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> x{0.0f,   -0.0f,   inf,
                         -inf,   20.0f,   -20.0f,
                         1e-30f, -1e-30f, std::numeric_limits<float>::quiet_NaN()};
    std::vector<float> y(x.size());
    liftlab::tanh_kernel(x.data(), y.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(y[0], 0.0f);
    EXPECT_FALSE(std::signbit(y[0]));
    EXPECT_EQ(y[1], 0.0f);
    EXPECT_TRUE(std::signbit(y[1]));
    EXPECT_EQ(y[2], 1.0f);
    EXPECT_EQ(y[3], -1.0f);
    EXPECT_EQ(y[4], 1.0f);
    EXPECT_EQ(y[5], -1.0f);
    EXPECT_EQ(y[6], 1e-30f);
    EXPECT_EQ(y[7], -1e-30f);
    EXPECT_TRUE(std::isnan(y[8]));
}

// The gradient is tanh′ at the output, (1 − y²) g — against torch::tanh's autograd on the same
// input (the outputs differ by a few ulp, so 1e-6) — and the second derivative, taken through
// the backward with create_graph, is −2 y (1 − y²) g as torch's is.
TEST(FastTanh, FirstAndSecondDerivativesMatchTorchsTanh) {
    torch::manual_seed(5);
    const auto x0 = 3.0 * torch::randn({37, 19});
    const auto g = torch::randn({37, 19});
    auto derivatives = [&](bool ours) {
        auto x = x0.clone().requires_grad_();
        const auto y = ours ? liftlab::fast_tanh(x) : torch::tanh(x);
        const auto d1 = torch::autograd::grad({(y * g).sum()}, {x}, {}, true, true)[0];
        const auto d2 = torch::autograd::grad({d1.sum()}, {x})[0];
        return std::vector<torch::Tensor>{y.detach(), d1.detach(), d2};
    };
    const auto ours = derivatives(true), theirs = derivatives(false);
    EXPECT_LT((ours[0] - theirs[0]).abs().max().item<float>(), 1e-6f);
    EXPECT_LT((ours[1] - theirs[1]).abs().max().item<float>(), 1e-6f);
    EXPECT_LT((ours[2] - theirs[2]).abs().max().item<float>(), 1e-5f);
    const auto y = ours[0].to(torch::kFloat64);
    EXPECT_LT((ours[1].to(torch::kFloat64) - (1 - y * y) * g).abs().max().item<double>(), 1e-6);
}

// Other dtypes go through torch::tanh unchanged; strided float32 input is read correctly.
TEST(FastTanh, Float64IsTorchsAndStridedInputIsHandled) {
    torch::manual_seed(6);
    const auto x64 = torch::randn({8, 5}, torch::kFloat64);
    EXPECT_TRUE(torch::equal(liftlab::fast_tanh(x64), torch::tanh(x64)));
    const auto x = torch::randn({6, 9}).t();  // not contiguous
    ASSERT_FALSE(x.is_contiguous());
    const auto y = liftlab::fast_tanh(x);
    EXPECT_EQ(y.sizes(), x.sizes());
    EXPECT_LT((y - torch::tanh(x)).abs().max().item<float>(), 1e-6f);
}

// A tanh MLP's features and parameter gradients stay where torch::tanh puts them.
TEST(FastTanh, TanhBackboneMatchesAnAllTorchForwardAndBackward) {
    torch::manual_seed(7);
    liftlab::MlpBackbone net(liftlab::MlpBackboneOptions(5, 12).hidden({16, 16}));
    const auto x = torch::randn({40, 5});
    auto torch_forward = [&] {
        auto h = x;
        for (const auto& m : net->modules(/*include_self=*/false))  // depth first: in order
            if (auto* layer = m->as<torch::nn::Linear>()) h = torch::tanh(layer->forward(h));
        return h;
    };
    auto grads = [&](const torch::Tensor& out) {
        net->zero_grad();
        out.pow(2).sum().backward();
        std::vector<torch::Tensor> g;
        for (const auto& p : net->parameters()) g.push_back(p.grad().clone());
        return g;
    };
    const auto ours = net->forward(x);
    const auto theirs = torch_forward();
    EXPECT_LT((ours - theirs).abs().max().item<float>(), 1e-6f);
    const auto ga = grads(net->forward(x)), gb = grads(torch_forward());
    for (size_t i = 0; i < ga.size(); ++i)
        EXPECT_LT((ga[i] - gb[i]).abs().max().item<float>(), 1e-5f) << "parameter " << i;
}
