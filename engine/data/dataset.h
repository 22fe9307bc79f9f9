// A supervised data set split into train and test tensors (float32, samples in the first dim).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace liftlab {

struct Dataset {
    // x: n × (input shape); y: n × ... × k targets of the squared loss (one-hot for classes;
    // n × s × 1 for operator learning, where every grid point is a sample of the last layer).
    torch::Tensor x_train, y_train;
    torch::Tensor x_test, y_test;
    // Classification only: int64 class indices and the class count (0 for regression).
    torch::Tensor labels_train, labels_test;
    int64_t num_classes = 0;
    std::vector<std::string> input_names, target_names;  // may be empty for generated data
    // Known values of the problem, written beside every run's final metrics (summary.json), e.g.
    // bayes_accuracy: the Bayes rule's accuracy on the test rows (class-mixture), the ceiling.
    std::map<std::string, double> reference;

    bool classification() const { return num_classes > 0; }
    int64_t input_dim() const { return x_train.size(1); }
    int64_t output_dim() const { return y_train.size(-1); }
    int64_t n_train() const { return x_train.size(0); }
    int64_t n_test() const { return x_test.size(0); }
};

struct TaskSpec;
// Fraction of a slow data preparation done (generation of Burgers data); return false to cancel,
// which throws DataCancelled.
using DataProgress = std::function<bool(double fraction)>;
class DataCancelled : public std::runtime_error {
public:
    DataCancelled() : std::runtime_error("data preparation cancelled") {}
};

// Builds the data set a task describes (generated or loaded). Throws DataError for bad files.
Dataset make_dataset(const TaskSpec& task, const DataProgress& progress = {});

// Where generated data (and what is fitted to it once, like the n-D flow proposal) is cached:
// task.cache_dir, else $XDG_CACHE_HOME/liftlab, else ~/.cache/liftlab ("" when none is known).
std::string data_cache_dir(const TaskSpec& task);

// The user's file or folder a task reads its data from ("" for generated data), for messages.
std::string user_data_source(const TaskSpec& task);

// Classification: one-hot targets of the squared loss beside the int64 labels (docs/methods.md
// §1.8).
Dataset classification_dataset(torch::Tensor x_train, torch::Tensor labels_train,
                               torch::Tensor x_test, torch::Tensor labels_test,
                               int64_t num_classes);

// The same data with every tensor on `device` (a no-op copy of the handles on the data's own
// device). Data are made on the CPU and moved once, so every device trains on the same bits.
Dataset to_device(const Dataset& data, const torch::Device& device);

}  // namespace liftlab
