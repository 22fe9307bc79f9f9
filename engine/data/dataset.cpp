#include "data/dataset.h"

#include "data/burgers.h"
#include "data/cifar_binary.h"
#include "data/csv_regression.h"
#include "data/demand_design.h"
#include "data/idx_loader.h"
#include "data/teacher_regression.h"
#include "spec/experiment_spec.h"

namespace liftlab {

namespace {

// The demand design as a Dataset: x = [P, t, s, C] (treatment, covariates, instrument C), y = Y;
// the test split is the 20×20×7 grid [p, t, s, 0] with the noise-free structural f as target.
Dataset make_demand_dataset(const TaskSpec& task) {
    const auto d = make_demand_design(task.n_train, task.rho, task.data_seed);
    const auto grid = demand_test_grid();
    Dataset out;
    out.x_train = torch::cat({d.treatment, d.covariates, d.instruments.narrow(1, 0, 1)}, 1)
                      .to(torch::kFloat32);
    out.y_train = d.outcome.to(torch::kFloat32);
    out.x_test = torch::cat({grid.treatment, grid.covariates,
                             torch::zeros({grid.treatment.size(0), 1}, torch::kFloat64)},
                            1)
                     .to(torch::kFloat32);
    out.y_test = grid.structural.to(torch::kFloat32);
    out.input_names = {"P", "t", "s", "C"};
    out.target_names = {"Y"};
    return out;
}

// Where generated data is cached: task.cache_dir, else $XDG_CACHE_HOME/liftlab, else
// ~/.cache/liftlab (empty: no cache when none of these can be determined).
std::string data_cache_dir(const TaskSpec& task) {
    if (!task.cache_dir.empty()) return task.cache_dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::string(xdg) + "/liftlab";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.cache/liftlab";
    return "";
}

// Operator learning: x = u0 (n × s); y = u(·, T) as n × s × 1, every grid point a sample of the
// last layer. Train and test are one generation (seeded), split in order.
Dataset make_burgers_dataset(const TaskSpec& task, const DataProgress& progress) {
    BurgersData data;
    try {
        data = load_or_generate_burgers(BurgersOptions(task.n_train + task.n_test)
                                            .fine_grid(task.fine_grid)
                                            .resolution(task.resolution)
                                            .viscosity(task.viscosity)
                                            .final_time(task.final_time)
                                            .seed(task.data_seed),
                                        data_cache_dir(task), progress);
    } catch (const BurgersCancelled&) {
        throw DataCancelled();
    }
    Dataset out;
    out.x_train = data.u0.narrow(0, 0, task.n_train).contiguous();
    out.y_train = data.u_final.narrow(0, 0, task.n_train).unsqueeze(-1).contiguous();
    out.x_test = data.u0.narrow(0, task.n_train, task.n_test).contiguous();
    out.y_test = data.u_final.narrow(0, task.n_train, task.n_test).unsqueeze(-1).contiguous();
    return out;
}

// Classification: targets of the squared loss are one-hot rows (METHODS.md, "Classification").
Dataset classification_dataset(torch::Tensor x_train, torch::Tensor labels_train,
                               torch::Tensor x_test, torch::Tensor labels_test,
                               int64_t num_classes) {
    Dataset out;
    out.num_classes = num_classes;
    out.x_train = std::move(x_train);
    out.x_test = std::move(x_test);
    out.labels_train = std::move(labels_train);
    out.labels_test = std::move(labels_test);
    out.y_train = torch::one_hot(out.labels_train, num_classes).to(torch::kFloat32);
    out.y_test = torch::one_hot(out.labels_test, num_classes).to(torch::kFloat32);
    return out;
}

// The first `cap` samples (0: all).
torch::Tensor head(const torch::Tensor& t, int64_t cap) {
    return cap > 0 && cap < t.size(0) ? t.narrow(0, 0, cap).contiguous() : t;
}

}  // namespace

Dataset make_dataset(const TaskSpec& task, const DataProgress& progress) {
    if (task.kind == "csv-regression") return make_csv_regression(task);
    if (task.kind == "dfiv-demand") return make_demand_dataset(task);
    if (task.kind == "burgers") return make_burgers_dataset(task, progress);
    if (task.kind == "fashion-mnist") {
        auto f = load_fashion_mnist(task.data_dir, task.n_train > 0 ? task.n_train : -1,
                                    task.n_test > 0 ? task.n_test : -1);
        return classification_dataset(f.images_train, f.labels_train, f.images_test, f.labels_test,
                                      FashionMnist::num_classes);
    }
    if (task.kind == "cifar-binary") {
        auto train = read_cifar_binary(task.train_files, task.label_bytes, task.label_index);
        auto test = read_cifar_binary(task.test_files, task.label_bytes, task.label_index);
        const int64_t classes = std::max(train.num_classes, test.num_classes);
        return classification_dataset(
            head(train.images, task.n_train), head(train.labels, task.n_train),
            head(test.images, task.n_test), head(test.labels, task.n_test), classes);
    }
    return make_teacher_regression(task);
}

}  // namespace liftlab
