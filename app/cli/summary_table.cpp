#include "summary_table.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "core/errors.h"

namespace liftlab::cli {

namespace {

// Columns shown when present, most telling first.
const std::vector<std::string> kMetricOrder = {"test_loss",      "test_accuracy",
                                               "test_rel_l2",    "tv",
                                               "tv_se",          "log_z",
                                               "log_z_se",       "ess_fraction", "proposal_nll", "nonpositive_dets",
                                               "sigma2_jac",     "sigma2_jac_null_sd",
                                               "p_value",        "sigma2_jac_theta",
                                               "p_value_theta",  "shoulder_occupancy",
                                               "exit_rate",      "median_dwell",
                                               "exits",          "censored_dwells",
                                               "train_set_loss", "train_loss",
                                               "kappa",          "eff_rank",
                                               "time_s",         "solve_fraction"};

std::string format_number(double v) {
    if (std::isnan(v)) return "–";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.4g", v);
    return buf;
}

}  // namespace

SummaryTable read_summary_table(const std::string& run_dir) {
    const std::string path = run_dir + "/summary.json";
    std::ifstream in(path);
    if (!in) throw DataError(path, 0, "cannot open (is this a LiftLab run folder?)");
    nlohmann::json summary, spec;
    try {
        summary = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
        throw DataError(path, 0, std::string("invalid JSON: ") + e.what());
    }
    std::ifstream spec_in(run_dir + "/spec.json");
    if (spec_in) spec = nlohmann::json::parse(spec_in, nullptr, /*allow_exceptions=*/false);

    SummaryTable t;
    if (spec.is_object() && spec.contains("sweep")) t.sweep_key = spec["sweep"].value("key", "");
    std::map<std::string, bool> seen_metric;
    // (method, sweep value) → metric → values over seeds
    std::vector<std::pair<std::string, std::string>> order;
    std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>>
        values;
    std::map<std::pair<std::string, std::string>, std::pair<int, int>> counts;
    for (const auto& r : summary.at("runs")) {
        std::string method = r.value("method", "?");
        const std::string sweep = r.contains("sweep_value") ? r["sweep_value"].dump() : "";
        if (!sweep.empty()) method = method.substr(0, method.find('@'));
        const auto key = std::make_pair(method, sweep);
        if (!counts.count(key)) order.push_back(key);
        auto& c = counts[key];
        ++c.first;
        if (r.value("status", "") == "diverged" || r.value("status", "") == "failed") ++c.second;
        const nlohmann::json final_metrics = r.value("final", nlohmann::json::object());
        for (const auto& [m, v] : final_metrics.items()) {
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
        row.seeds = counts[key].first;
        row.diverged = counts[key].second;
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
    out += " seeds | diverged |";
    for (const auto& m : t.metrics) out += " " + m + " (mean ± sd) |";
    out += "\n|---|";
    if (!t.sweep_key.empty()) out += "---|";
    out += "---|---|";
    for (size_t i = 0; i < t.metrics.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& r : t.rows) {
        out += "| " + r.method + " |";
        if (!t.sweep_key.empty()) out += " " + r.sweep_value + " |";
        out += " " + std::to_string(r.seeds) + " | " + std::to_string(r.diverged) + " |";
        for (size_t i = 0; i < t.metrics.size(); ++i)
            out += " " + format_number(r.mean[i]) + " ± " + format_number(r.sd[i]) + " |";
        out += "\n";
    }
    return out;
}

std::string to_csv(const SummaryTable& t) {
    std::string out = "method,sweep_value,seeds,diverged";
    for (const auto& m : t.metrics) out += "," + m + "_mean," + m + "_sd";
    out += "\n";
    char buf[40];
    for (const auto& r : t.rows) {
        std::string sv = r.sweep_value;
        for (auto& c : sv)
            if (c == ',') c = ' ';
        out +=
            r.method + "," + sv + "," + std::to_string(r.seeds) + "," + std::to_string(r.diverged);
        for (size_t i = 0; i < t.metrics.size(); ++i) {
            std::snprintf(buf, sizeof(buf), ",%.10g,%.10g", r.mean[i], r.sd[i]);
            out += buf;
        }
        out += "\n";
    }
    return out;
}

}  // namespace liftlab::cli
