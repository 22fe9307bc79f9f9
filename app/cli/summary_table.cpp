#include "summary_table.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "core/c_numbers.h"
#include "core/errors.h"
#include "run/run_files.h"

namespace liftlab::cli {

namespace {

// Columns shown when present, most telling first.
// clang-format off
const std::vector<std::string> kMetricOrder = {
    "test_loss",        "test_accuracy",      "bayes_accuracy",   "test_rel_l2",
    "tv",               "tv_se",              "log_z",            "log_z_se",
    "ess_fraction",     "proposal_nll",       "nonpositive_dets", "sigma2_jac",
    "sigma2_jac_null_sd", "p_value",          "sigma2_jac_theta", "p_value_theta",
    "shoulder_occupancy", "exit_rate",        "median_dwell",     "exits",
    "censored_dwells",  "train_set_loss",     "train_loss",       "kappa",
    "eff_rank",         "time_s",             "solve_fraction"};
// clang-format on

std::string format_number(double v) {
    if (std::isnan(v)) return "–";
    return c_general(v, 4);
}

}  // namespace

namespace {

using RowKey = std::pair<std::string, std::string>;  // (method, sweep value)

// The sweep key's name from spec.json; "" without one (spec.json only adds that name).
std::string summary_sweep_key(const std::string& run_dir) {
    try {
        return read_spec_json(run_dir + "/" + run_folder::kSpec).sweep_key;
    } catch (const DataError&) {
        return {};
    }
}

// A run's row: its method label without the sweep suffix, and its sweep value as a table cell
// (scalars only).
RowKey summary_row_key(const RunRecord& r) {
    std::string method = r.method.empty() ? "?" : r.method;
    std::string sweep;
    if (r.sweep_value && !r.sweep_value->is_structured())
        sweep = r.sweep_value->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (!sweep.empty()) method = method.substr(0, method.find('@'));
    return {method, sweep};
}

// Mean ± sd over the seeds that finished, per metric column.
SummaryTable::Row summary_row(const RowKey& key, const SummaryTable::Row& counts,
                              const std::vector<std::string>& metrics,
                              std::map<std::string, std::vector<double>>& values) {
    SummaryTable::Row row = counts;
    row.method = key.first;
    row.sweep_value = key.second;
    for (const auto& m : metrics) {
        const auto& v = values[m];
        double mean = NAN, sd = NAN;
        if (!v.empty()) {
            mean = 0;
            for (double x : v) mean += x;
            mean /= v.size();
            sd = 0;
            for (double x : v) sd += (x - mean) * (x - mean);
            sd = v.size() > 1 ? std::sqrt(sd / (v.size() - 1)) : 0.0;
        }
        row.mean.push_back(mean);
        row.sd.push_back(sd);
    }
    return row;
}

}  // namespace

SummaryTable read_summary_table(const std::string& run_dir) {
    const std::string path = run_dir + "/" + run_folder::kSummary;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw DataError(path, 0, "cannot open (is this a LiftLab run folder?)");
    // Regular file, bounded size and nesting: a hostile summary must not crash the report.
    const SummaryRecord summary = read_summary_json(path);
    if (!summary.runs_list) throw DataError(path, 0, "expected an object with a \"runs\" array");

    SummaryTable t;
    t.sweep_key = summary_sweep_key(run_dir);
    std::map<std::string, bool> seen_metric;
    // (method, sweep value) → metric → values over the seeds that finished (status ok)
    std::vector<RowKey> order;
    std::map<RowKey, std::map<std::string, std::vector<double>>> values;
    std::map<RowKey, SummaryTable::Row> counts;
    for (const auto& r : summary.runs) {
        const RowKey key = summary_row_key(r);
        if (!counts.count(key)) order.push_back(key);
        for (const auto& w : r.warnings)
            t.warnings.push_back(r.method + " (seed " +
                                 (r.seed ? std::to_string(*r.seed) : std::string("?")) + "): " + w);
        auto& c = counts[key];
        ++c.seeds;
        const auto status = r.run_status();
        if (status && stopped_early(*status)) ++c.diverged;
        if (status == RunStatus::Cancelled || status == RunStatus::Running) ++c.cancelled;
        // Means over seeds of different lengths mean nothing: only finished seeds count.
        if (status != RunStatus::Ok) continue;
        for (const auto& [m, v] : r.final) {
            values[key][m].push_back(v);
            seen_metric[m] = true;
        }
    }
    for (const auto& m : kMetricOrder)
        if (seen_metric.count(m)) t.metrics.push_back(m);
    // Named feature sets (DFIV: eff_rank_instrument, kappa_treatment, …) after the others.
    for (const auto& [m, seen] : seen_metric)
        if (m.rfind("kappa_", 0) == 0 || m.rfind("eff_rank_", 0) == 0) t.metrics.push_back(m);
    for (const auto& key : order)
        t.rows.push_back(summary_row(key, counts[key], t.metrics, values[key]));
    return t;
}

std::string to_markdown(const SummaryTable& t) {
    std::string out = "| method |";
    if (!t.sweep_key.empty()) out += " " + t.sweep_key + " |";
    out += " seeds | diverged | cancelled |";
    for (const auto& m : t.metrics) out += " " + m + " (mean ± sd) |";
    out += "\n|---|";
    if (!t.sweep_key.empty()) out += "---|";
    out += "---|---|---|";
    for (size_t i = 0; i < t.metrics.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& r : t.rows) {
        out += "| " + r.method + " |";
        if (!t.sweep_key.empty()) out += " " + r.sweep_value + " |";
        out += " " + std::to_string(r.seeds) + " | " + std::to_string(r.diverged) + " | " +
               std::to_string(r.cancelled) + " |";
        for (size_t i = 0; i < t.metrics.size(); ++i)
            out += " " + format_number(r.mean[i]) + " ± " + format_number(r.sd[i]) + " |";
        out += "\n";
    }
    if (!t.warnings.empty()) {
        out += "\n**Warnings**\n\n";
        for (const auto& w : t.warnings) out += "- " + w + "\n";
    }
    return out;
}

std::string to_csv(const SummaryTable& t) {
    std::string out = "method,sweep_value,seeds,diverged,cancelled";
    for (const auto& m : t.metrics) out += "," + m + "_mean," + m + "_sd";
    out += "\n";
    for (const auto& r : t.rows) {
        std::string sv = r.sweep_value;
        for (auto& c : sv)
            if (c == ',') c = ' ';
        out += r.method + "," + sv + "," + std::to_string(r.seeds) + "," +
               std::to_string(r.diverged) + "," + std::to_string(r.cancelled);
        for (size_t i = 0; i < t.metrics.size(); ++i)
            out += "," + c_general(r.mean[i], 10) + "," + c_general(r.sd[i], 10);
        out += "\n";
    }
    return out;
}

}  // namespace liftlab::cli
