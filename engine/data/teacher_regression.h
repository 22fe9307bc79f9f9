// Regression data from a random MLP teacher (docs/methods.md §8.1):
// x ~ N(0, I), y = teacher(x) + noise · N(0, I), teacher layers tanh with N(0, 1/fan_in) weights.
#pragma once
#include "data/dataset.h"

namespace liftlab {

struct TaskSpec;
Dataset make_teacher_regression(const TaskSpec& task);

}  // namespace liftlab
