// Constants and tensor options shared by the engine's numerical code: one definition each (the
// engine is compiled as unity batches, so file-local copies of the same name would collide).
#pragma once
#include <torch/torch.h>

#include <limits>
#include <stdexcept>
#include <string>

namespace liftlab {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kEulerGamma = 0.57721566490153286061;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Float64 tensors: the dtype of every reference computation (quadratures, targets, solves).
inline torch::TensorOptions f64() {
    return torch::TensorOptions().dtype(torch::kFloat64);
}

// Uniform draws on the open interval (0, 1) (a drawn 0 becomes the smallest normal double), so
// inverse-CDF transforms such as −log u stay finite.
inline torch::Tensor open_uniform(at::IntArrayRef shape, at::Generator& gen) {
    return torch::rand(shape, gen, f64()).clamp_min(std::numeric_limits<double>::min());
}

// A sampler's row count: n ≥ 0, or std::invalid_argument naming the sampler.
inline void check_sample_count(int64_t n, const char* who = "sample") {
    if (n < 0)
        throw std::invalid_argument(std::string(who) + ": n must be >= 0, got " +
                                    std::to_string(n));
}

}  // namespace liftlab
