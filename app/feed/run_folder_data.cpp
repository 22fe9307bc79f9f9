#include "run_folder_data.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include "core/bounded_input.h"
#include "core/c_numbers.h"
#include "core/errors.h"
#include "methods/method_registry.h"
#include "run/run_store.h"
#include "spec/experiment_spec.h"

namespace liftlab {

namespace {

namespace fs = std::filesystem;

struct CsvRow {
    int line = 0;  // 1-based line in the file
    std::vector<std::string> cells;
};

constexpr size_t kNotesPerFile = 3;  // then "… and N more"

// Notes of one file, at most kNotesPerFile of them spelled out.
class FileNotes {
public:
    FileNotes(std::vector<std::string>& notes, std::string file)
        : notes_(notes), file_(std::move(file)) {}
    ~FileNotes() {
        if (count_ > kNotesPerFile)
            notes_.push_back(file_ + ": " + std::to_string(count_ - kNotesPerFile) +
                             " more row(s) left out");
    }
    void add(int line, const std::string& what) {
        if (++count_ <= kNotesPerFile)
            notes_.push_back(file_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " + what);
    }

private:
    std::vector<std::string>& notes_;
    std::string file_;
    size_t count_ = 0;
};

// Rows of a CSV with the header `header` and exactly `columns` cells. A missing file has no
// rows; a file that is not a regular file is a DataError. A wrong header leaves the whole file
// out, a malformed complete row that row (each with a note); the last row without its newline is
// a killed writer's cut-off row, skipped silently.
std::vector<CsvRow> read_rows(const std::string& path, const char* header, size_t columns,
                              FileNotes& notes) {
    std::vector<CsvRow> out;
    std::error_code ec;
    if (!fs::exists(path, ec)) return out;
    const std::string text = read_regular_file(path, kMaxMetricsBytes);
    size_t pos = 0;
    int line_no = 0;
    while (pos < text.size()) {
        const size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) break;  // cut off
        const std::string line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++line_no;
        if (line_no == 1) {
            if (line != header) {
                notes.add(1, "header is not '" + std::string(header) + "': file left out");
                return {};
            }
            continue;
        }
        std::vector<std::string> cells;
        size_t s = 0;
        for (size_t c; (c = line.find(',', s)) != std::string::npos; s = c + 1)
            cells.push_back(line.substr(s, c - s));
        cells.push_back(line.substr(s));
        if (cells.size() == columns)
            out.push_back({line_no, std::move(cells)});
        else
            notes.add(line_no, std::to_string(cells.size()) + " fields, " +
                                   std::to_string(columns) + " expected: row left out");
    }
    return out;
}

bool to_double(const std::string& s, double* v) {
    return c_parse_double(s, v);
}

// A step or index cell: a DataError naming file and line when it is not an int.
int int_cell(const std::string& path, const CsvRow& r, size_t column, const char* what) {
    long long v = 0;
    if (!c_parse_int(r.cells[column], 0, std::numeric_limits<int>::max(), &v))
        throw DataError(
            path, r.line,
            std::string(what) + " '" + r.cells[column] + "' is not an integer in [0, 2^31)");
    return static_cast<int>(v);
}

// A JSON file of the folder, or null when it is missing or unusable (every file but
// metrics.csv is optional; an unusable one gets a note). Bounded: a hostile file must not crash
// the window.
nlohmann::json read_json(const std::string& path, std::vector<std::string>& notes) {
    try {
        std::error_code ec;
        if (!fs::exists(path, ec)) return nlohmann::json();
        auto j = read_json_file(path);
        if (!j.is_object()) notes.push_back(path + ": not a JSON object: left out");
        return j;
    } catch (const DataError& e) {
        notes.push_back(std::string(e.what()) + ": left out");
        return nlohmann::json();
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
    const auto j = read_json(dir + "/claims.json", d.notes);
    if (!j.is_object() || !j.contains("claims") || !j["claims"].is_array())
        throw DataError(dir + "/claims.json", 0, "has no \"claims\" table");
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

RunFolderData read_run_folder(const std::string& dir) {
    RunFolderData d;
    d.dir = dir;
    const std::string metrics_path = dir + "/" + run_folder::kMetrics;
    if (!fs::exists(metrics_path) && fs::exists(dir + "/claims.json"))
        return read_claims_folder(dir);
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
    const auto spec = read_json(dir + "/" + run_folder::kSpec, d.notes);
    if (spec.is_object() && spec.contains("schema_version") &&
        (!spec["schema_version"].is_number_integer() ||
         spec["schema_version"].get<long long>() > kSpecSchemaVersion))
        d.notes.push_back(dir + "/" + run_folder::kSpec + ": schema_version " +
                          spec["schema_version"].dump() +
                          " is newer than this LiftLab's: read as far as it goes");
    // Type-checked reads: a hand-edited or corrupted spec.json/summary.json never throws here.
    auto int_of = [](const nlohmann::json& o, const char* key, long long fallback) {
        return o.is_object() && o.contains(key) && o[key].is_number_integer()
                   ? o[key].get<long long>()
                   : fallback;
    };
    if (spec.is_object()) {
        d.name = string_of(spec, "name", d.name);
        const size_t seeds =
            spec.contains("seeds") && spec["seeds"].is_array() ? spec["seeds"].size() : 0;
        const long long b = int_of(spec, "batch_size", 0);
        // The task's target names what was fitted when one preset serves several (CP-Flow toys,
        // the 1-D log-concave targets): "name — target  (batch B, N steps, S seeds)". Only for
        // task kinds that have targets: spec.json writes the field (its default) for every kind.
        const std::string kind_name =
            spec.contains("task") ? string_of(spec["task"], "kind", "") : std::string();
        const TaskKindInfo* kind_info = find_task_kind(kind_name);
        const std::string target = kind_info && !kind_info->targets.empty()
                                       ? string_of(spec["task"], "target", "")
                                       : std::string();
        const long long steps = int_of(spec, "steps", 0);
        // A sweep over the batch size names the swept sizes ("batch 16/64/256"), not the base.
        std::string batch = std::to_string(b);
        if (spec.contains("sweep") && string_of(spec["sweep"], "key", "") == "batch_size" &&
            spec["sweep"].contains("values") && spec["sweep"]["values"].is_array()) {
            std::string swept;
            for (const auto& v : spec["sweep"]["values"])
                if (v.is_number_integer())
                    swept += (swept.empty() ? "" : "/") + std::to_string(v.get<long long>());
            if (!swept.empty()) batch = swept;
        }
        d.title = d.name + (target.empty() ? "" : " — " + target) + "  (batch " + batch +
                  (steps > 0 ? ", " + std::to_string(steps) + " steps" : "") + ", " +
                  std::to_string(seeds) + " seed" + (seeds == 1 ? "" : "s") + ")";
        if (spec.contains("task")) d.task_kind = string_of(spec["task"], "kind", "");
        d.batch_size = static_cast<int>(b);
        d.steps = static_cast<int>(int_of(spec, "steps", 0));
        if (const auto* kind = find_task_kind(d.task_kind); kind && kind->grid_rows)
            d.rows_per_sample = static_cast<int>(int_of(spec["task"], "resolution", 1));
        if (spec.contains("data"))
            d.output_dim = static_cast<int>(int_of(spec["data"], "output_dim", 0));
        if (spec.contains("sweep")) d.sweep_key = string_of(spec["sweep"], "key", "");
        std::vector<std::pair<std::string, std::string>> methods;
        if (const auto m = spec.find("methods"); m != spec.end() && m->is_array())
            for (const auto& entry : *m) {
                const std::string name = string_of(entry, "name", "");
                if (!name.empty()) methods.push_back({string_of(entry, "label", name), name});
            }
        d.training_loss = classification_losses(d.task_kind, methods);
    }

    const std::string summary_path = dir + "/" + run_folder::kSummary;
    const auto summary = read_json(summary_path, d.notes);
    {
        std::error_code ec;
        if (!fs::exists(summary_path, ec))
            d.notes.push_back(summary_path + ": missing (no statuses or final metrics)");
    }
    if (summary.is_object()) {
        d.status = string_of(summary, "status", "");
        if (!parse_run_status(d.status))
            d.notes.push_back(summary_path + ": status '" + d.status +
                              "' is not one LiftLab writes");
        if (summary.contains("runs") && !summary["runs"].is_array())
            d.notes.push_back(summary_path + ": \"runs\" is not a list: left out");
        const auto runs = summary.find("runs");
        if (runs != summary.end() && runs->is_array())
            for (const auto& r : *runs) {
                const std::string method = string_of(r, "method", "?");
                auto it = std::find_if(d.finals.begin(), d.finals.end(),
                                       [&](const auto& p) { return p.first == method; });
                if (it == d.finals.end()) {
                    d.finals.push_back({method, {}});
                    it = d.finals.end() - 1;
                }
                if (!r.is_object()) continue;
                if (const auto w = r.find("warnings"); w != r.end() && w->is_array())
                    for (const auto& text : *w)
                        if (text.is_string())
                            d.warnings.push_back(
                                method + " (seed " +
                                (r.contains("seed") && r["seed"].is_number_integer()
                                     ? std::to_string(r["seed"].get<long long>())
                                     : std::string("?")) +
                                "): " + text.get<std::string>());
                if (!r.contains("final") || !r["final"].is_object()) continue;
                const auto& final_metrics = r["final"];
                for (const auto& [k, v] : final_metrics.items())
                    if (v.is_number()) it->second[k].push_back(v.get<double>());

                // Sweep members: a diverged or failed run's last logged values are not a final
                // metric, so only "ok" runs enter the sweep figure (summary.md counts the others).
                if (d.sweep_key.empty() || !r.contains("sweep_value") ||
                    !r["sweep_value"].is_number() || string_of(r, "status", "") != RunStatus::Ok)
                    continue;
                const std::string base = method.substr(0, method.find('@'));
                auto sit = std::find_if(d.sweep.begin(), d.sweep.end(),
                                        [&](const auto& p) { return p.first == base; });
                if (sit == d.sweep.end()) {
                    d.sweep.push_back({base, {}});
                    sit = d.sweep.end() - 1;
                }
                auto& at_value = sit->second[r["sweep_value"].get<double>()];
                for (const auto& [k, v] : final_metrics.items())
                    if (v.is_number()) at_value[k].push_back(v.get<double>());
            }
    }

    // spectra.csv: step,method,seed,index,sigma — the first seed of each method.
    std::map<std::string, std::string> first_seed;
    const std::string spectra_path = dir + "/" + run_folder::kSpectra;
    FileNotes spectra_notes(d.notes, spectra_path);
    for (const auto& row : read_rows(spectra_path, run_folder::kSpectraColumns, 5, spectra_notes)) {
        const auto& r = row.cells;
        double sigma;
        long long index = 0;
        if (!to_double(r[4], &sigma) || !c_parse_int(r[3], 0, 1 << 30, &index)) {
            spectra_notes.add(row.line, "index or sigma is not a number: row left out");
            continue;
        }
        if (!first_seed.count(r[1])) first_seed[r[1]] = r[2];
        if (first_seed[r[1]] != r[2]) continue;
        d.spectra[r[1]][int_cell(spectra_path, row, 0, "step")].push_back(sigma);
    }
    // traces.csv: step,method,seed,coordinate,value — the first seed of each method.
    first_seed.clear();
    const std::string traces_path = dir + "/" + run_folder::kTraces;
    FileNotes trace_notes(d.notes, traces_path);
    for (const auto& row : read_rows(traces_path, run_folder::kTracesColumns, 5, trace_notes)) {
        const auto& r = row.cells;
        double step, value;
        long long coordinate = 0;
        if (!to_double(r[0], &step) || !to_double(r[4], &value) ||
            !c_parse_int(r[3], 0, std::numeric_limits<int>::max(), &coordinate)) {
            trace_notes.add(row.line, "step, coordinate or value is not a number: row left out");
            continue;
        }
        if (!first_seed.count(r[1])) first_seed[r[1]] = r[2];
        if (first_seed[r[1]] != r[2]) continue;
        auto& t = d.traces[{r[1], int_cell(traces_path, row, 3, "coordinate")}];
        t.first.push_back(step);
        t.second.push_back(value);
    }
    // dwells.csv: method,seed,dwell — every seed.
    const std::string dwells_path = dir + "/" + run_folder::kDwells;
    FileNotes dwell_notes(d.notes, dwells_path);
    for (const auto& row : read_rows(dwells_path, run_folder::kDwellsColumns, 3, dwell_notes)) {
        double dwell;
        if (to_double(row.cells[2], &dwell) && dwell >= 0)
            d.dwells[row.cells[0]].push_back(dwell);
        else
            dwell_notes.add(row.line,
                            "dwell '" + row.cells[2] + "' is not a step count: row left out");
    }
    return d;
}

}  // namespace liftlab
