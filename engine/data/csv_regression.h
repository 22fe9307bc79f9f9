// Regression on a user's CSV table: chosen target columns, the rest are inputs; a seeded
// train/test split; optional z-scoring with statistics of the training split only.
#pragma once
#include "data/dataset.h"

namespace liftlab {

struct TaskSpec;
Dataset make_csv_regression(const TaskSpec& task);

}  // namespace liftlab
