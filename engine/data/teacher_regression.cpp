#include "data/teacher_regression.h"

#include <ATen/CPUGeneratorImpl.h>

#include "spec/experiment_spec.h"

namespace liftlab {

Dataset make_teacher_regression(const TaskSpec& task) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(task.data_seed);
    const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
    const int64_t n = static_cast<int64_t>(task.n_train) + task.n_test;

    // The teacher is drawn first, so changing n_train keeps the same function.
    std::vector<std::pair<torch::Tensor, torch::Tensor>> layers;
    int64_t fan_in = task.input_dim;
    std::vector<int> widths = task.teacher_hidden;
    widths.push_back(task.output_dim);
    for (int w : widths) {
        auto weight = torch::randn({fan_in, w}, gen, opts) / std::sqrt(static_cast<double>(fan_in));
        auto bias = 0.1 * torch::randn({w}, gen, opts);
        layers.emplace_back(weight, bias);
        fan_in = w;
    }
    auto x = torch::randn({n, task.input_dim}, gen, opts);
    auto h = x;
    for (size_t i = 0; i < layers.size(); ++i) {
        h = torch::addmm(layers[i].second, h, layers[i].first);
        if (i + 1 < layers.size()) h = torch::tanh(h);
    }
    // Scale the clean signal to unit variance per output so `noise` is a noise-to-signal ratio.
    h = h / h.std(/*dim=*/0, /*unbiased=*/true, /*keepdim=*/true).clamp_min(1e-12);
    auto y = h + task.noise * torch::randn(h.sizes(), gen, opts);

    Dataset d;
    d.x_train = x.narrow(0, 0, task.n_train).to(torch::kFloat32).contiguous();
    d.y_train = y.narrow(0, 0, task.n_train).to(torch::kFloat32).contiguous();
    d.x_test = x.narrow(0, task.n_train, task.n_test).to(torch::kFloat32).contiguous();
    d.y_test = y.narrow(0, task.n_train, task.n_test).to(torch::kFloat32).contiguous();
    return d;
}

}  // namespace liftlab
