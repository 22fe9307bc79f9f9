// Shared helpers for engine tests: a temporary folder and tolerance checks on tensors.
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "core/errors.h"
#include "core/numeric.h"

namespace liftlab::test {

// Float64 tensor options, for reference computations.
inline const torch::TensorOptions kF64 = liftlab::f64();

// The bytes of a generated binary file (IDX, CIFAR records).
using Bytes = std::vector<uint8_t>;

// Bound on a Monte-Carlo statistic, in standard errors of its sample (seeded draws: a test
// fails only if the estimator is wrong, not by chance).
inline constexpr double kStdErrors = 5.0;

// Φ(x), the standard normal CDF.
inline double normal_cdf(double x) {
    return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

// Subnormal floats kept (neither flushed nor read as zero) on this thread while the object lives,
// then the previous mode back. set_compute_threads turns flushing on for the whole process, so a
// test about subnormal values states its mode instead of depending on which test ran before it
// in the same process (ctest runs each test alone; the test binary run directly does not).
// (x86 only: elsewhere a no-op.)
class KeepSubnormals {
public:
#if defined(__SSE__)
    KeepSubnormals() : previous_(_mm_getcsr()) {
        _mm_setcsr(previous_ & ~kFlushBits);
    }
    ~KeepSubnormals() {
        _mm_setcsr(previous_);
    }
#else
    KeepSubnormals() = default;
#endif
    KeepSubnormals(const KeepSubnormals&) = delete;
    KeepSubnormals& operator=(const KeepSubnormals&) = delete;

private:
    static constexpr unsigned kFlushBits = 0x8040;  // MXCSR: FTZ (bit 15) and DAZ (bit 6)
    [[maybe_unused]] unsigned previous_ = 0;
};

// A fresh folder under the test binary's folder, removed when the object dies.
class TempDir {
public:
    TempDir() {
        std::random_device rd;
        path_ = std::filesystem::path(LIFTLAB_TEST_BINARY_DIR) / ("tmp-" + std::to_string(rd()));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    std::string str() const { return path_.string(); }
    std::string write(const std::string& name, const std::string& content) const {
        std::ofstream(file(name)) << content;
        return file(name);
    }

private:
    std::filesystem::path path_;
};

// max |a − b| / max(|b|_max, floor): a relative error that does not blow up near zero entries.
inline double relative_error(const torch::Tensor& a, const torch::Tensor& b, double floor = 1e-12) {
    const double diff = (a - b).abs().max().item<double>();
    const double scale = std::max(b.abs().max().item<double>(), floor);
    return diff / scale;
}

// The DataError thrown by `f()`; fails the test when none is thrown.
template <typename F>
DataError data_error(F f) {
    try {
        f();
    } catch (const DataError& e) {
        return e;
    }
    ADD_FAILURE() << "expected a DataError";
    return DataError("", 0, "");
}

// The values of an integer tensor, for readable comparisons.
inline std::vector<int64_t> values(const torch::Tensor& x) {
    const auto c = x.to(torch::kInt64).contiguous();
    return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

inline bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// f() must throw std::invalid_argument whose message contains `needle`.
template <typename F>
void expect_invalid_argument(F f, const std::string& needle) {
    try {
        f();
        ADD_FAILURE() << "expected std::invalid_argument containing '" << needle << "'";
    } catch (const std::invalid_argument& e) {
        EXPECT_TRUE(has(e.what(), needle)) << e.what();
    }
}

}  // namespace liftlab::test
