// A supervised data set split into train and test tensors (float32, samples in rows).
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

namespace liftlab {

struct Dataset {
    torch::Tensor x_train, y_train;  // n_train × input_dim, n_train × output_dim
    torch::Tensor x_test, y_test;
    std::vector<std::string> input_names, target_names;  // may be empty for generated data

    int64_t input_dim() const { return x_train.size(1); }
    int64_t output_dim() const { return y_train.size(1); }
    int64_t n_train() const { return x_train.size(0); }
};

struct TaskSpec;
// Builds the data set a task describes (generated or loaded). Throws DataError for bad files.
Dataset make_dataset(const TaskSpec& task);

}  // namespace liftlab
