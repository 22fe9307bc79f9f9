#include "data/class_mixture.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <stdexcept>

#include "spec/experiment_spec.h"

namespace liftlab {

ClassMixture draw_class_mixture(const TaskSpec& task) {
    const int64_t classes = task.output_dim, dim = task.input_dim;
    if (classes < 2) throw std::invalid_argument("class-mixture: needs at least 2 classes");
    if (dim < 1) throw std::invalid_argument("class-mixture: input_dim must be positive");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(task.data_seed);
    const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
    const int64_t hidden = task.teacher_hidden.empty() ? dim : task.teacher_hidden.front();

    // The problem first (centres, then the warp), so the sample counts do not change it.
    ClassMixture m;
    m.centres = torch::randn({classes, dim}, gen, opts);
    m.warp_in = torch::randn({dim, hidden}, gen, opts) / std::sqrt(static_cast<double>(dim));
    m.warp_bias = 0.1 * torch::randn({hidden}, gen, opts);
    m.warp_out = torch::randn({hidden, dim}, gen, opts) / std::sqrt(static_cast<double>(hidden));

    const int64_t n = static_cast<int64_t>(task.n_train) + task.n_test;
    m.labels = torch::randint(classes, {n}, gen, torch::TensorOptions().dtype(torch::kInt64));
    m.latents =
        m.centres.index_select(0, m.labels) + task.noise * torch::randn({n, dim}, gen, opts);
    m.inputs =
        m.latents + torch::tanh(torch::addmm(m.warp_bias, m.latents, m.warp_in)).matmul(m.warp_out);
    return m;
}

double nearest_centre_accuracy(const torch::Tensor& latents, const torch::Tensor& labels,
                               const torch::Tensor& centres) {
    // ||u − μ||² = ||u||² − 2 u·μ + ||μ||²; the first term is the same for every centre.
    const auto score = 2.0 * latents.matmul(centres.t()) - centres.pow(2).sum(1);
    return score.argmax(1).eq(labels).to(torch::kFloat64).mean().item<double>();
}

Dataset make_class_mixture(const TaskSpec& task) {
    const ClassMixture m = draw_class_mixture(task);
    const auto x = m.inputs.to(torch::kFloat32);
    auto data = classification_dataset(
        x.narrow(0, 0, task.n_train).contiguous(), m.labels.narrow(0, 0, task.n_train).contiguous(),
        x.narrow(0, task.n_train, task.n_test).contiguous(),
        m.labels.narrow(0, task.n_train, task.n_test).contiguous(), task.output_dim);
    // The ceiling on these test rows: the nearest-centre (Bayes) rule on their latents.
    data.reference["bayes_accuracy"] =
        nearest_centre_accuracy(m.latents.narrow(0, task.n_train, task.n_test),
                                m.labels.narrow(0, task.n_train, task.n_test), m.centres);
    return data;
}

}  // namespace liftlab
