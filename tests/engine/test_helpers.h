// Shared helpers for engine tests: a temporary folder and tolerance checks on tensors.
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace liftlab::test {

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

}  // namespace liftlab::test
