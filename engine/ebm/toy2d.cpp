#include "ebm/toy2d.h"

#include "core/numeric.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace liftlab {

namespace {

// 8-Gaussians: centre scale, noise std and the final divisor of the reference recipe.
constexpr double kCentreScale = 4.0;
constexpr double kEightNoiseStd = 0.5;
constexpr double kEightDivisor = 1.414;
// 2-Spirals: the arm turns 540 degrees; uniform jitter width, divisor and noise std.
constexpr double kSpiralTurnDegrees = 540.0;
constexpr double kSpiralJitter = 0.5;
constexpr double kSpiralDivisor = 3.0;
constexpr double kSpiralNoiseStd = 0.1;
// The reference sweep's scaling (toy2d.h): 8-Gaussians radius and noise; the spiral's radius
// offset (r = t + π); its noise sd before the division by kSpiralDivisor.
constexpr double kDemoRadius = 2.0;
constexpr double kDemoEightNoiseStd = 0.1;
constexpr double kDemoSpiralOffset = kPi;
constexpr double kDemoSpiralNoiseStd = 0.1;

}  // namespace

torch::Tensor eight_gaussians_centres() {
    const double r = 1.0 / std::sqrt(2.0);
    auto c =
        torch::tensor({1.0, 0.0, -1.0, 0.0, 0.0, 1.0, 0.0, -1.0, r, r, r, -r, -r, r, -r, -r}, f64())
            .view({8, 2});
    return c * (kCentreScale / kEightDivisor);
}

torch::Tensor make_eight_gaussians(int64_t n, uint64_t seed) {
    check_sample_count(n, "make_eight_gaussians");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto noise = torch::randn({n, 2}, gen, f64()) * kEightNoiseStd;
    const auto idx =
        torch::randint(/*high=*/8, {n}, gen, torch::TensorOptions().dtype(torch::kLong));
    const auto centres = eight_gaussians_centres() * kEightDivisor;  // 4c, before the divisor
    return (centres.index_select(0, idx) + noise) / kEightDivisor;
}

torch::Tensor make_two_spirals(int64_t n, uint64_t seed) {
    check_sample_count(n, "make_two_spirals");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const int64_t m = (n + 1) / 2;
    const auto t =
        torch::sqrt(torch::rand({m}, gen, f64())) * kSpiralTurnDegrees * 2.0 * kPi / 360.0;
    const auto x = -torch::cos(t) * t + kSpiralJitter * torch::rand({m}, gen, f64());
    const auto y = torch::sin(t) * t + kSpiralJitter * torch::rand({m}, gen, f64());
    const auto arm = torch::stack({x, y}, /*dim=*/1);
    const auto clean = torch::cat({arm, -arm}, /*dim=*/0).narrow(0, 0, n) / kSpiralDivisor;
    return clean + kSpiralNoiseStd * torch::randn({n, 2}, gen, f64());
}

torch::Tensor eight_gaussians_demo_centres() {
    const auto k = torch::arange(8, f64()) * (2.0 * kPi / 8.0);
    return torch::stack({torch::cos(k), torch::sin(k)}, /*dim=*/1) * kDemoRadius;
}

torch::Tensor make_eight_gaussians_demo(int64_t n, uint64_t seed) {
    check_sample_count(n, "make_eight_gaussians_demo");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto idx =
        torch::randint(/*high=*/8, {n}, gen, torch::TensorOptions().dtype(torch::kLong));
    const auto noise = torch::randn({n, 2}, gen, f64()) * kDemoEightNoiseStd;
    return eight_gaussians_demo_centres().index_select(0, idx) + noise;
}

torch::Tensor make_two_spirals_demo(int64_t n, uint64_t seed) {
    check_sample_count(n, "make_two_spirals_demo");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const int64_t m = (n + 1) / 2;
    const auto t = torch::sqrt(torch::rand({m}, gen, f64())) * kSpiralTurnDegrees * kPi / 180.0;
    const auto r = t + kDemoSpiralOffset;
    const auto arm = torch::stack({-r * torch::cos(t), r * torch::sin(t)}, /*dim=*/1);
    const auto clean = torch::cat({arm, -arm}, /*dim=*/0).narrow(0, 0, n);
    return (clean + kDemoSpiralNoiseStd * torch::randn({n, 2}, gen, f64())) / kSpiralDivisor;
}

}  // namespace liftlab
