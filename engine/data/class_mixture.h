// Many-class classification from a warped Gaussian mixture: a generated stand-in for the seed's
// high-cardinality (ImageNet) limit of the squared loss, where the number of classes is a knob.
//
//   centres  μ_c ~ N(0, I_D),  c = 0 … C − 1           (C = task.output_dim, D = task.input_dim)
//   label    c ~ uniform{0 … C − 1}
//   latent   u = μ_c + σ ε,  ε ~ N(0, I_D)             (σ = task.noise)
//   input    x = u + tanh(u A + a) B                   (A: D × h, B: h × D with N(0, 1/fan_in)
//                                                       entries, a ~ 0.1 N(0, 1); h = the first
//                                                       of task.teacher_hidden, or D)
//
// With equal isotropic class covariances and uniform priors the Bayes rule on u is the nearest
// centre, so `nearest_centre_accuracy` on the latents is the ceiling a classifier can reach (on x
// too wherever the warp is one-to-one). Centres and warp are drawn before the samples, so n_train
// and n_test change the sample count, not the problem.
#pragma once
#include "data/dataset.h"

namespace liftlab {

struct TaskSpec;

struct ClassMixture {
    torch::Tensor centres;                       // C × D, float64
    torch::Tensor latents;                       // n × D, float64 (train rows first, then test)
    torch::Tensor inputs;                        // n × D, float64
    torch::Tensor labels;                        // n, int64
    torch::Tensor warp_in, warp_bias, warp_out;  // A (D × h), a (h), B (h × D), float64
};

// The generator's parts, n = n_train + n_test rows; throws std::invalid_argument for C < 2.
ClassMixture draw_class_mixture(const TaskSpec& task);
// Fraction of rows whose nearest centre (Euclidean) is their own class.
double nearest_centre_accuracy(const torch::Tensor& latents, const torch::Tensor& labels,
                               const torch::Tensor& centres);
// The data set: float32 inputs, one-hot targets, labels.
Dataset make_class_mixture(const TaskSpec& task);

}  // namespace liftlab
