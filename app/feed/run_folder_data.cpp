#include "run_folder_data.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "core/errors.h"
#include "methods/method_registry.h"
#include "run/run_files.h"
#include "spec/experiment_spec.h"

namespace liftlab {

namespace {

namespace fs = std::filesystem;

constexpr size_t kNotesPerFile = 3;  // then "… and N more"

// A file's row issues as notes, at most kNotesPerFile of them spelled out.
void add_row_notes(std::vector<std::string>& notes, const std::string& path,
                   const std::vector<DataError>& issues) {
    for (size_t k = 0; k < issues.size() && k < kNotesPerFile; ++k)
        notes.push_back(issues[k].what());
    if (issues.size() > kNotesPerFile)
        notes.push_back(path + ": " + std::to_string(issues.size() - kNotesPerFile) +
                        " more row(s) left out");
}

bool file_exists(const std::string& path) {
    std::error_code ec;
    return fs::exists(path, ec);
}

// A JSON object file of the folder (run/run_files.h: bounded), or nothing when it is missing or
// unusable: every file but metrics.csv is optional, and an unusable one gets a note.
std::optional<nlohmann::json> optional_json_object(const std::string& path,
                                                   std::vector<std::string>& notes) {
    if (!file_exists(path)) return std::nullopt;
    try {
        return read_json_object(path);
    } catch (const DataError& e) {
        notes.push_back(std::string(e.what()) + ": left out");
        return std::nullopt;
    }
}

std::string string_of(const nlohmann::json& o, const char* key, const std::string& fallback) {
    return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>()
                                                                  : fallback;
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

std::map<std::string, std::string> classification_losses(
    const std::string& task_kind, const std::vector<std::pair<std::string, std::string>>& methods) {
    std::map<std::string, std::string> out;
    const auto* kind = find_task_kind(task_kind);
    if (!kind || !kind->classification) return out;
    for (const auto& [label, name] : methods) {
        const auto* info = find_method(name);
        out[label] = info && info->cross_entropy ? "cross-entropy" : "squared error";
    }
    return out;
}

bool RunFolderData::icnn() const {
    const auto* kind = find_task_kind(task_kind);
    return kind && kind->family == TaskFamily::Icnn;
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

namespace {

// A claims folder: its table from claims.json (written by engine/claims/claims_runner.cpp).
RunFolderData read_claims_folder(const std::string& dir) {
    RunFolderData d;
    d.dir = dir;
    d.name = "claims";
    const auto j = optional_json_object(dir + "/claims.json", d.notes).value_or(nlohmann::json());
    if (!j.is_object() || !j.contains("claims") || !j["claims"].is_array())
        throw DataError(dir + "/claims.json", 0, "has no \"claims\" table");
    d.claims_folder = true;
    d.title = "claims (" + string_of(j, "tier", "?") + " tier)";
    d.status = string_of(j, "status", "");
    for (const auto& c : j["claims"]) {
        if (!c.is_object()) continue;
        RunFolderData::ClaimLine line;
        line.id = string_of(c, "id", "");
        line.claim = string_of(c, "claim", "");
        line.paper = string_of(c, "paper", "");
        line.tier = string_of(c, "tier", "");
        const auto& v = c.contains("preset") ? c["preset"] : nlohmann::json::object();
        line.ours = string_of(v, "ours", "");
        line.seeds = string_of(v, "seeds", "");
        line.test = string_of(v, "test", "");
        line.verdict = string_of(v, "verdict", "");
        line.needed = string_of(v, "needed", "");
        line.p = v.is_object() && v.contains("p") && v["p"].is_number() ? v["p"].get<double>()
                                                                        : std::nan("");
        if (c.contains("tuned") && c["tuned"] == true && c.contains("best"))
            line.tuned_verdict = string_of(c["best"], "verdict", "");
        d.claims.push_back(std::move(line));
    }
    return d;
}

}  // namespace

namespace {

// metrics.csv: the curves, and the method order of first appearance.
void read_metrics_part(RunFolderData& d, const std::string& path) {
    for (const auto& r : read_metrics_csv(path)) {
        d.metrics[r.metric][r.method][r.step].push_back(r.value);
        if (std::find(d.method_order.begin(), d.method_order.end(), r.method) ==
            d.method_order.end())
            d.method_order.push_back(r.method);
    }
}

// "name — target  (batch B, N steps, S seeds)". The task's target names what was fitted when one
// preset serves several (CP-Flow toys, the 1-D log-concave targets), only for task kinds that
// have targets: spec.json writes the field (its default) for every kind. A sweep over the batch
// size names the swept sizes ("batch 16/64/256"), not the base.
std::string run_title(const SpecRecord& spec, const std::string& name) {
    const TaskKindInfo* kind = find_task_kind(spec.task_kind);
    const std::string target = kind && !kind->targets.empty() ? spec.task_target : std::string();
    std::string batch = std::to_string(spec.batch_size);
    if (spec.sweep_key == "batch_size") {
        std::string swept;
        for (const auto& v : spec.sweep_values)
            if (v.is_number_integer())
                swept += (swept.empty() ? "" : "/") + std::to_string(v.get<long long>());
        if (!swept.empty()) batch = swept;
    }
    const size_t seeds = spec.seed_count;
    return name + (target.empty() ? "" : " — " + target) + "  (batch " + batch +
           (spec.steps > 0 ? ", " + std::to_string(spec.steps) + " steps" : "") + ", " +
           std::to_string(seeds) + " seed" + (seeds == 1 ? "" : "s") + ")";
}

// spec.json: the name, title, task and sizes.
void read_spec_part(RunFolderData& d, const std::string& path) {
    const auto json = optional_json_object(path, d.notes);
    if (!json) return;
    const SpecRecord spec = spec_record_of(*json);
    if (spec.schema_version_bad || spec.schema_version.value_or(0) > kSpecSchemaVersion)
        d.notes.push_back(path + ": schema_version " + spec.json["schema_version"].dump() +
                          " is newer than this LiftLab's: read as far as it goes");
    if (!spec.name.empty()) d.name = spec.name;
    d.title = run_title(spec, d.name);
    d.task_kind = spec.task_kind;
    d.batch_size = static_cast<int>(spec.batch_size);
    d.steps = static_cast<int>(spec.steps);
    if (const auto* kind = find_task_kind(d.task_kind); kind && kind->grid_rows)
        d.rows_per_sample = static_cast<int>(spec.task_resolution.value_or(1));
    d.output_dim = static_cast<int>(spec.output_dim);
    d.sweep_key = spec.sweep_key;
    std::vector<std::pair<std::string, std::string>> methods;
    for (const auto& m : spec.methods)
        if (!m.name.empty()) methods.push_back({m.label, m.name});
    d.training_loss = classification_losses(d.task_kind, methods);
}

// A sweep member's final metrics. A diverged or failed run's last logged values are not a final
// metric, so only "ok" runs enter the sweep figure (summary.md counts the others).
void add_sweep_member(RunFolderData& d, const RunRecord& r, const std::string& method) {
    const auto value = r.sweep_number();
    if (d.sweep_key.empty() || !value || r.run_status() != RunStatus::Ok) return;
    const std::string base = method.substr(0, method.find('@'));
    auto it = std::find_if(d.sweep.begin(), d.sweep.end(),
                           [&](const auto& p) { return p.first == base; });
    if (it == d.sweep.end()) {
        d.sweep.push_back({base, {}});
        it = d.sweep.end() - 1;
    }
    auto& at_value = it->second[*value];
    for (const auto& [k, v] : r.final) at_value[k].push_back(v);
}

// summary.json: the status, each method's final metrics, the warnings and the sweep.
void read_summary_part(RunFolderData& d, const std::string& path) {
    if (!file_exists(path)) {
        d.notes.push_back(path + ": missing (no statuses or final metrics)");
        return;
    }
    const auto json = optional_json_object(path, d.notes);
    if (!json) return;
    const SummaryRecord summary = summary_record_of(*json);
    d.status = summary.status;
    if (!summary.run_status())
        d.notes.push_back(path + ": status '" + d.status + "' is not one LiftLab writes");
    if (summary.has_runs && !summary.runs_list)
        d.notes.push_back(path + ": \"runs\" is not a list: left out");
    for (const auto& r : summary.runs) {
        const std::string method = r.method.empty() ? "?" : r.method;
        auto it = std::find_if(d.finals.begin(), d.finals.end(),
                               [&](const auto& p) { return p.first == method; });
        if (it == d.finals.end()) {
            d.finals.push_back({method, {}});
            it = d.finals.end() - 1;
        }
        const std::string seed = r.seed ? std::to_string(*r.seed) : std::string("?");
        for (const auto& text : r.warnings)
            d.warnings.push_back(method + " (seed " + seed + "): " + text);
        for (const auto& [k, v] : r.final) it->second[k].push_back(v);
        add_sweep_member(d, r, method);
    }
}

// spectra.csv — the first seed of each method.
void read_spectra_part(RunFolderData& d, const std::string& path) {
    if (!file_exists(path)) return;
    std::vector<DataError> issues;
    std::map<std::string, std::uint64_t> first_seed;
    for (const auto& r : read_spectra_csv(path, &issues)) {
        const auto seed = first_seed.emplace(r.method, r.seed).first->second;
        if (seed == r.seed) d.spectra[r.method][r.step].push_back(r.sigma);
    }
    add_row_notes(d.notes, path, issues);
}

// traces.csv — the first seed of each method.
void read_traces_part(RunFolderData& d, const std::string& path) {
    if (!file_exists(path)) return;
    std::vector<DataError> issues;
    std::map<std::string, std::uint64_t> first_seed;
    for (const auto& r : read_traces_csv(path, &issues)) {
        if (first_seed.emplace(r.method, r.seed).first->second != r.seed) continue;
        auto& t = d.traces[{r.method, r.coordinate}];
        t.first.push_back(r.step);
        t.second.push_back(r.value);
    }
    add_row_notes(d.notes, path, issues);
}

// dwells.csv — every seed pooled.
void read_dwells_part(RunFolderData& d, const std::string& path) {
    if (!file_exists(path)) return;
    std::vector<DataError> issues;
    for (const auto& r : read_dwells_csv(path, &issues))
        d.dwells[r.method].push_back(static_cast<double>(r.dwell));
    add_row_notes(d.notes, path, issues);
}

}  // namespace

RunFolderData read_run_folder(const std::string& dir) {
    const std::string metrics_path = dir + "/" + run_folder::kMetrics;
    if (!file_exists(metrics_path) && file_exists(dir + "/claims.json"))
        return read_claims_folder(dir);
    if (!file_exists(metrics_path))
        throw DataError(metrics_path, 0, "no metrics.csv here: is this a LiftLab run folder?");
    RunFolderData d;
    d.dir = dir;
    read_metrics_part(d, metrics_path);
    d.name = fs::path(dir).filename().string();
    d.title = d.name;
    read_spec_part(d, dir + "/" + run_folder::kSpec);
    read_summary_part(d, dir + "/" + run_folder::kSummary);
    read_spectra_part(d, dir + "/" + run_folder::kSpectra);
    read_traces_part(d, dir + "/" + run_folder::kTraces);
    read_dwells_part(d, dir + "/" + run_folder::kDwells);
    return d;
}

}  // namespace liftlab
