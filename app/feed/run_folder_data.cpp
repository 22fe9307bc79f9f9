#include "run_folder_data.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.h"
#include "run/run_store.h"

namespace liftlab {

namespace {

namespace fs = std::filesystem;

// Rows of a CSV with a header line and exactly `columns` cells (cut-off rows skipped).
std::vector<std::vector<std::string>> read_rows(const std::string& path, size_t columns) {
    std::vector<std::vector<std::string>> out;
    std::ifstream in(path);
    if (!in) return out;
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ',')) cells.push_back(cell);
        if (cells.size() == columns) out.push_back(std::move(cells));
    }
    return out;
}

bool to_double(const std::string& s, double* v) {
    try {
        size_t used = 0;
        *v = std::stod(s, &used);
        return used > 0;
    } catch (const std::exception&) {
        return false;
    }
}

nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path);
    if (!in) return nlohmann::json();
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

}  // namespace

double mean_of(const std::vector<double>& v) {
    if (v.empty()) return NAN;
    double m = 0;
    for (double x : v) m += x;
    return m / static_cast<double>(v.size());
}

double sd_of(const std::vector<double>& v) {
    if (v.size() < 2) return 0.0;
    const double m = mean_of(v);
    double s2 = 0;
    for (double x : v) s2 += (x - m) * (x - m);
    return std::sqrt(s2 / static_cast<double>(v.size() - 1));
}

double median_of(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool RunFolderData::icnn() const {
    return task_kind.rfind("icnn-", 0) == 0 || task_kind.rfind("cpflow-", 0) == 0;
}

std::vector<std::string> RunFolderData::metric_names() const {
    std::vector<std::string> out;
    for (const auto& [m, _] : metrics) out.push_back(m);
    return out;
}

const std::map<std::string, std::vector<double>>* RunFolderData::final_of(
    const std::string& method) const {
    for (const auto& [m, f] : finals)
        if (m == method) return &f;
    return nullptr;
}

RunFolderData read_run_folder(const std::string& dir) {
    RunFolderData d;
    d.dir = dir;
    const std::string metrics_path = dir + "/metrics.csv";
    if (!fs::exists(metrics_path))
        throw DataError(metrics_path, 0, "no metrics.csv here: is this a LiftLab run folder?");
    for (const auto& r : read_metrics_csv(metrics_path)) {
        d.metrics[r.metric][r.method][r.step].push_back(r.value);
        if (std::find(d.method_order.begin(), d.method_order.end(), r.method) ==
            d.method_order.end())
            d.method_order.push_back(r.method);
    }

    d.name = fs::path(dir).filename().string();
    d.title = d.name;
    const auto spec = read_json(dir + "/spec.json");
    if (spec.is_object()) {
        d.name = spec.value("name", d.name);
        const auto seeds = spec.value("seeds", nlohmann::json::array()).size();
        d.title = d.name + "  (batch " + std::to_string(spec.value("batch_size", 0)) + ", " +
                  std::to_string(seeds) + " seed" + (seeds == 1 ? "" : "s") + ")";
        if (spec.contains("task") && spec["task"].is_object())
            d.task_kind = spec["task"].value("kind", "");
        d.batch_size = spec.value("batch_size", 0);
        d.steps = spec.value("steps", 0);
        if (d.task_kind == "burgers") d.rows_per_sample = spec["task"].value("resolution", 1);
        if (spec.contains("data") && spec["data"].is_object())
            d.output_dim = spec["data"].value("output_dim", 0);
        if (spec.contains("sweep") && spec["sweep"].is_object())
            d.sweep_key = spec["sweep"].value("key", "");
    }

    const auto summary = read_json(dir + "/summary.json");
    if (summary.is_object()) {
        d.status = summary.value("status", "");
        for (const auto& r : summary.value("runs", nlohmann::json::array())) {
            const std::string method = r.value("method", "?");
            auto it = std::find_if(d.finals.begin(), d.finals.end(),
                                   [&](const auto& p) { return p.first == method; });
            if (it == d.finals.end()) {
                d.finals.push_back({method, {}});
                it = d.finals.end() - 1;
            }
            const nlohmann::json final_metrics = r.value("final", nlohmann::json::object());
            for (const auto& [k, v] : final_metrics.items())
                if (v.is_number()) it->second[k].push_back(v.get<double>());

            // Sweep members: a diverged or failed run's last logged values are not a final
            // metric, so only "ok" runs enter the sweep figure (summary.md counts the others).
            const auto sv = r.value("sweep_value", nlohmann::json());
            if (d.sweep_key.empty() || !sv.is_number() || r.value("status", "") != "ok") continue;
            const std::string base = method.substr(0, method.find('@'));
            auto sit = std::find_if(d.sweep.begin(), d.sweep.end(),
                                    [&](const auto& p) { return p.first == base; });
            if (sit == d.sweep.end()) {
                d.sweep.push_back({base, {}});
                sit = d.sweep.end() - 1;
            }
            auto& at_value = sit->second[sv.get<double>()];
            for (const auto& [k, v] : final_metrics.items())
                if (v.is_number()) at_value[k].push_back(v.get<double>());
        }
    }

    // spectra.csv: step,method,seed,index,sigma — the first seed of each method.
    std::map<std::string, std::string> first_seed;
    for (const auto& r : read_rows(dir + "/spectra.csv", 5)) {
        double sigma;
        if (!to_double(r[4], &sigma)) continue;
        if (!first_seed.count(r[1])) first_seed[r[1]] = r[2];
        if (first_seed[r[1]] != r[2]) continue;
        d.spectra[r[1]][std::stoi(r[0])].push_back(sigma);
    }
    // traces.csv: step,method,seed,coordinate,value — the first seed of each method.
    first_seed.clear();
    for (const auto& r : read_rows(dir + "/traces.csv", 5)) {
        double step, value;
        if (!to_double(r[0], &step) || !to_double(r[4], &value)) continue;
        if (!first_seed.count(r[1])) first_seed[r[1]] = r[2];
        if (first_seed[r[1]] != r[2]) continue;
        auto& t = d.traces[{r[1], std::stoi(r[3])}];
        t.first.push_back(step);
        t.second.push_back(value);
    }
    // dwells.csv: method,seed,dwell — every seed.
    for (const auto& r : read_rows(dir + "/dwells.csv", 3)) {
        double dwell;
        if (to_double(r[2], &dwell)) d.dwells[r[0]].push_back(dwell);
    }
    return d;
}

}  // namespace liftlab
