#include "data/csv_regression.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>

#include "core/errors.h"
#include "data/csv_table.h"
#include "spec/experiment_spec.h"

namespace liftlab {

Dataset make_csv_regression(const TaskSpec& task) {
    const CsvTable table = read_csv_table(task.csv_path);
    const int64_t n = static_cast<int64_t>(table.rows.size());
    const int64_t c = static_cast<int64_t>(table.columns.size());
    if (c < 2) throw DataError(task.csv_path, 1, "needs at least one input and one target column");

    std::vector<int64_t> target_idx;
    if (task.target_columns.empty()) {
        target_idx.push_back(c - 1);
    } else {
        for (const auto& name : task.target_columns) {
            auto it = std::find(table.columns.begin(), table.columns.end(), name);
            if (it == table.columns.end())
                throw DataError(task.csv_path, 1,
                                "no column named '" + name + "' (task.target_columns)");
            target_idx.push_back(it - table.columns.begin());
        }
    }
    std::vector<int64_t> input_idx;
    for (int64_t j = 0; j < c; ++j)
        if (std::find(target_idx.begin(), target_idx.end(), j) == target_idx.end())
            input_idx.push_back(j);
    if (input_idx.empty()) throw DataError(task.csv_path, 1, "every column is a target");

    const int64_t n_test = std::max<int64_t>(1, std::llround(task.test_fraction * n));
    const int64_t n_train = n - n_test;
    if (n_train < 2)
        throw DataError(task.csv_path, 0,
                        "too few rows (" + std::to_string(n) + ") for a train/test split");

    auto all = torch::empty({n, c}, torch::kFloat64);
    auto acc = all.accessor<double, 2>();
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < c; ++j) acc[i][j] = table.rows[i][j];
    auto gen = at::make_generator<at::CPUGeneratorImpl>(task.data_seed);
    auto perm = torch::randperm(n, gen, torch::kLong);
    all = all.index_select(0, perm);
    auto x = all.index_select(1, torch::tensor(input_idx, torch::kLong));
    auto y = all.index_select(1, torch::tensor(target_idx, torch::kLong));

    auto x_tr = x.narrow(0, 0, n_train), x_te = x.narrow(0, n_train, n_test);
    auto y_tr = y.narrow(0, 0, n_train), y_te = y.narrow(0, n_train, n_test);
    if (task.standardize) {
        // Statistics of the training split only; a constant column is centred, not scaled.
        auto standardise = [](torch::Tensor& tr, torch::Tensor& te) {
            auto mean = tr.mean(0, /*keepdim=*/true);
            auto sd = tr.std(0, /*unbiased=*/true, /*keepdim=*/true);
            sd = torch::where(sd > 1e-12, sd, torch::ones_like(sd));
            tr = (tr - mean) / sd;
            te = (te - mean) / sd;
        };
        standardise(x_tr, x_te);
        standardise(y_tr, y_te);
    }
    Dataset d;
    d.x_train = x_tr.to(torch::kFloat32).contiguous();
    d.y_train = y_tr.to(torch::kFloat32).contiguous();
    d.x_test = x_te.to(torch::kFloat32).contiguous();
    d.y_test = y_te.to(torch::kFloat32).contiguous();
    for (auto j : input_idx) d.input_names.push_back(table.columns[j]);
    for (auto j : target_idx) d.target_names.push_back(table.columns[j]);
    return d;
}

}  // namespace liftlab
