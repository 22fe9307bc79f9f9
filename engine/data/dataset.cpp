#include "data/dataset.h"

#include "core/c_numbers.h"
#include "core/errors.h"
#include "data/burgers.h"
#include "data/cifar_binary.h"
#include "data/class_mixture.h"
#include "data/csv_regression.h"
#include "data/csv_table.h"
#include "data/demand_design.h"
#include "data/fmnist_latents.h"
#include "data/idx_loader.h"
#include "data/tabular21.h"
#include "data/teacher_regression.h"
#include "ebm/log_concave_targets.h"
#include "ebm/nd_targets.h"
#include "ebm/toy2d.h"
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

}  // namespace

std::string user_data_source(const TaskSpec& task) {
    if (!task.csv_path.empty() && (task.kind == "csv-regression" || task.kind == "cpflow-tabular" ||
                                   (task.kind == "icnn-ebm-nd" && task.target == "csv")))
        return task.csv_path;
    if (task.kind == "fashion-mnist" ||
        (task.kind == "icnn-ebm-nd" && task.target == "fmnist-latents"))
        return task.data_dir;
    if (task.kind == "cifar-binary" && !task.train_files.empty()) return task.train_files.front();
    return "";
}

std::string data_cache_dir(const TaskSpec& task) {
    if (!task.cache_dir.empty()) return task.cache_dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::string(xdg) + "/liftlab";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.cache/liftlab";
    return "";
}

// Classification: targets of the squared loss are one-hot rows (docs/methods.md §1.8).
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

namespace {

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

// The first `cap` samples (0: all).
torch::Tensor head(const torch::Tensor& t, int64_t cap) {
    return cap > 0 && cap < t.size(0) ? t.narrow(0, 0, cap).contiguous() : t;
}

// Density estimation (the ICNN family): x holds the samples, y a zero column (no targets).
Dataset density_dataset(torch::Tensor train, torch::Tensor test) {
    Dataset out;
    out.x_train = train.to(torch::kFloat32).contiguous();
    out.x_test = test.to(torch::kFloat32).contiguous();
    out.y_train = torch::zeros({out.x_train.size(0), 1});
    out.y_test = torch::zeros({out.x_test.size(0), 1});
    return out;
}

// The user's table for a density model: every column is a coordinate; a seeded split by
// test_fraction, z-scored with training statistics when task.standardize.
Dataset table_density_dataset(const TaskSpec& task) {
    const auto table = read_csv_table(task.csv_path);
    const int64_t n = static_cast<int64_t>(table.rows.size());
    const int64_t d = static_cast<int64_t>(table.columns.size());
    const int64_t n_test = static_cast<int64_t>(std::llround(task.test_fraction * n));
    if (n_test < 1 || n - n_test < 2)
        throw DataError(task.csv_path, 0,
                        "too few rows (" + std::to_string(n) + ") for a train/test split");
    auto all = torch::empty({n, d}, torch::kFloat64);
    auto* p = all.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < d; ++j) p[i * d + j] = table.rows[i][j];
    auto gen = at::detail::createCPUGenerator(task.data_seed);
    const auto perm = torch::randperm(n, gen, torch::kInt64);
    all = all.index_select(0, perm);
    auto train = all.narrow(0, 0, n - n_test);
    auto test = all.narrow(0, n - n_test, n_test);
    if (task.standardize) {
        const auto mean = train.mean(0);
        const auto sd = train.std(0).clamp_min(1e-12);
        train = (train - mean) / sd;
        test = (test - mean) / sd;
    }
    Dataset out = density_dataset(train, test);
    out.input_names = table.columns;
    return out;
}

Dataset make_icnn_dataset(const TaskSpec& task, const DataProgress& progress) {
    // Train and test are independent draws: the test seed is derived from the data seed.
    const uint64_t test_seed = task.data_seed * 0x9E3779B97F4A7C15ULL + 1;
    if (task.kind == "icnn-ebm-1d") {
        const auto target = make_log_concave_target(task.target);
        return density_dataset(target->sample(task.n_train, task.data_seed).unsqueeze(1),
                               target->sample(task.n_test, test_seed).unsqueeze(1));
    }
    if (task.kind == "cpflow-toy") {
        auto make = task.target == "8gaussians"        ? make_eight_gaussians
                    : task.target == "2spirals"        ? make_two_spirals
                    : task.target == "8gaussians-demo" ? make_eight_gaussians_demo
                                                       : make_two_spirals_demo;
        return density_dataset(make(task.n_train, task.data_seed), make(task.n_test, test_seed));
    }
    if (task.kind == "icnn-ebm-nd" && task.target == "fmnist-latents") {
        LatentOptions o;
        o.data_dir = task.data_dir;
        o.latent_dim = task.dim;
        o.steps = task.latent_steps;
        o.n_train = task.n_train;
        o.n_test = task.n_test;
        o.seed = task.data_seed;
        o.cache_dir = data_cache_dir(task);
        const auto latents = fashion_mnist_latents(o, progress);
        return density_dataset(latents.train, latents.test);
    }
    if (task.kind == "icnn-ebm-nd" && task.target == "tabular21")
        return density_dataset(make_tabular21(task.n_train, task.data_seed),
                               make_tabular21(task.n_test, test_seed));
    if (task.kind == "icnn-ebm-nd" && task.target == "csv") return table_density_dataset(task);
    if (task.kind == "icnn-ebm-nd") {
        const auto target = make_nd_target(task.target, task.dim, task.data_seed);
        return density_dataset(target->sample(task.n_train, task.data_seed),
                               target->sample(task.n_test, test_seed));
    }
    if (task.kind == "cpflow-tabular") {
        if (task.csv_path.empty())
            return density_dataset(make_tabular21(task.n_train, task.data_seed),
                                   make_tabular21(task.n_test, test_seed));
        return table_density_dataset(task);
    }
    throw SpecError("task.kind", "'" + task.kind + "' has no data set in this build");
}

}  // namespace

namespace {

// Which file or folder a task's data comes from, for messages.
std::string data_source(const TaskSpec& task) {
    auto file = user_data_source(task);
    return file.empty() ? "task '" + task.kind + "'" : file;
}

// Training on non-finite inputs would look like a diverging method; it is a data error.
void check_finite(const Dataset& d, const TaskSpec& task) {
    const std::pair<const char*, const torch::Tensor*> parts[] = {{"training inputs", &d.x_train},
                                                                  {"training targets", &d.y_train},
                                                                  {"test inputs", &d.x_test},
                                                                  {"test targets", &d.y_test}};
    for (const auto& [what, t] : parts) {
        if (!t->defined() || !t->is_floating_point() || t->numel() == 0) continue;
        const auto bad = torch::logical_not(torch::isfinite(*t));
        if (!bad.any().item<bool>()) continue;
        const int64_t row = bad.reshape({t->size(0), -1}).any(1).nonzero()[0][0].item<int64_t>();
        throw DataError(data_source(task), 0,
                        std::string(what) + " hold a non-finite value (sample " +
                            std::to_string(row + 1) +
                            " after loading: a value too large for single precision, about "
                            "±3.4e38, or one that overflows when standardised)");
    }
    if (d.n_train() < 1) throw DataError(data_source(task), 0, "no training samples");
    if (d.n_test() < 1) throw DataError(data_source(task), 0, "no test samples");
}

Dataset make_dataset_unchecked(const TaskSpec& task, const DataProgress& progress) {
    if (is_icnn_task(task.kind)) return make_icnn_dataset(task, progress);
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
    if (task.kind == "class-mixture") return make_class_mixture(task);
    return make_teacher_regression(task);
}

}  // namespace

// task.split = "validation": the last round(fraction · n) training rows become the scored split
// and leave the training split; the test split is dropped unread (docs/methods.md §13.4).
Dataset hold_out_validation(Dataset d, const TaskSpec& task) {
    const int64_t n = d.n_train();
    const int64_t n_val = std::llround(task.validation_fraction * static_cast<double>(n));
    if (n_val < 1 || n - n_val < 1)
        throw DataError(data_source(task), 0,
                        "task.validation_fraction " + c_shortest(task.validation_fraction) +
                            " of " + std::to_string(n) +
                            " training rows leaves no validation or no training row");
    auto tail = [&](const torch::Tensor& t) {
        return t.defined() && t.numel() > 0 ? t.narrow(0, n - n_val, n_val).contiguous() : t;
    };
    auto front = [&](const torch::Tensor& t) {
        return t.defined() && t.numel() > 0 ? t.narrow(0, 0, n - n_val).contiguous() : t;
    };
    d.x_test = tail(d.x_train);
    d.y_test = tail(d.y_train);
    d.labels_test = tail(d.labels_train);
    d.x_train = front(d.x_train);
    d.y_train = front(d.y_train);
    d.labels_train = front(d.labels_train);
    d.reference.clear();  // computed on the test rows (class-mixture's Bayes rate)
    return d;
}

Dataset make_dataset(const TaskSpec& task, const DataProgress& progress) {
    Dataset d = make_dataset_unchecked(task, progress);
    if (task.split == "validation") d = hold_out_validation(std::move(d), task);
    check_finite(d, task);
    return d;
}

Dataset to_device(const Dataset& data, const torch::Device& device) {
    Dataset out = data;
    for (torch::Tensor* t : {&out.x_train, &out.y_train, &out.x_test, &out.y_test,
                             &out.labels_train, &out.labels_test})
        if (t->defined()) *t = t->to(device);
    return out;
}

}  // namespace liftlab
