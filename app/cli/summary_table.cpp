#include "summary_table.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "core/bounded_input.h"
#include "core/c_numbers.h"
#include "core/errors.h"
#include "run/run_folder_schema.h"

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

SummaryTable read_summary_table(const std::string& run_dir) {
    const std::string path = run_dir + "/" + run_folder::kSummary;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw DataError(path, 0, "cannot open (is this a LiftLab run folder?)");
    // Regular file, bounded size and nesting: a hostile summary must not crash the report.
    const nlohmann::json summary = read_json_file(path);
    nlohmann::json spec;
    try {
        spec = read_json_file(run_dir + "/" + run_folder::kSpec);
    } catch (const DataError&) {
        // spec.json only adds the sweep key's name
    }
    if (!summary.is_object() || !summary.contains("runs") || !summary["runs"].is_array())
        throw DataError(path, 0, "expected an object with a \"runs\" array");

    SummaryTable t;
    if (spec.is_object() && spec.contains("sweep") && spec["sweep"].is_object() &&
        spec["sweep"].contains("key") && spec["sweep"]["key"].is_string())
        t.sweep_key = spec["sweep"]["key"].get<std::string>();
    std::map<std::string, bool> seen_metric;
    // (method, sweep value) → metric → values over the seeds that finished (status ok)
    std::vector<std::pair<std::string, std::string>> order;
    std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>>
        values;
    std::map<std::pair<std::string, std::string>, SummaryTable::Row> counts;
    auto text = [](const nlohmann::json& r, const char* key) {
        return r.is_object() && r.contains(key) && r[key].is_string() ? r[key].get<std::string>()
                                                                      : std::string();
    };
    for (const auto& r : summary["runs"]) {
        std::string method = text(r, "method");
        if (method.empty()) method = "?";
        // Scalars only: the value is shown in a table cell.
        const bool has_sweep =
            r.is_object() && r.contains("sweep_value") && !r["sweep_value"].is_structured();
        const std::string sweep =
            has_sweep
                ? r["sweep_value"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                : "";
        if (!sweep.empty()) method = method.substr(0, method.find('@'));
        const auto key = std::make_pair(method, sweep);
        if (!counts.count(key)) order.push_back(key);
        if (r.is_object() && r.contains("warnings") && r["warnings"].is_array())
            for (const auto& w : r["warnings"])
                if (w.is_string())
                    t.warnings.push_back(text(r, "method") + " (seed " +
                                         (r.contains("seed") && r["seed"].is_number_unsigned()
                                              ? std::to_string(r["seed"].get<std::uint64_t>())
                                              : std::string("?")) +
                                         "): " + w.get<std::string>());
        auto& c = counts[key];
        ++c.seeds;
        const auto status = parse_run_status(text(r, "status"));
        if (status && stopped_early(*status)) ++c.diverged;
        if (status == RunStatus::Cancelled || status == RunStatus::Running) ++c.cancelled;
        // Means over seeds of different lengths mean nothing: only finished seeds count.
        if (status != RunStatus::Ok) continue;
        if (!r.contains("final") || !r["final"].is_object()) continue;
        for (const auto& [m, v] : r["final"].items()) {
            if (!v.is_number()) continue;
            values[key][m].push_back(v.get<double>());
            seen_metric[m] = true;
        }
    }
    for (const auto& m : kMetricOrder)
        if (seen_metric.count(m)) t.metrics.push_back(m);
    // Named feature sets (DFIV: eff_rank_instrument, kappa_treatment, …) after the others.
    for (const auto& [m, seen] : seen_metric)
        if (m.rfind("kappa_", 0) == 0 || m.rfind("eff_rank_", 0) == 0) t.metrics.push_back(m);
    for (const auto& key : order) {
        SummaryTable::Row row;
        row.method = key.first;
        row.sweep_value = key.second;
        row.seeds = counts[key].seeds;
        row.diverged = counts[key].diverged;
        row.cancelled = counts[key].cancelled;
        for (const auto& m : t.metrics) {
            const auto& v = values[key][m];
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
        t.rows.push_back(std::move(row));
    }
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
