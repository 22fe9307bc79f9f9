#include "data/dataset.h"

#include "data/csv_regression.h"
#include "data/teacher_regression.h"
#include "spec/experiment_spec.h"

namespace liftlab {

Dataset make_dataset(const TaskSpec& task) {
    if (task.kind == "csv-regression") return make_csv_regression(task);
    return make_teacher_regression(task);
}

}  // namespace liftlab
