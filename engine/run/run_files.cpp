#include "run/run_files.h"

#include <cmath>
#include <limits>

#include "core/bounded_input.h"
#include "core/c_numbers.h"

namespace liftlab {

namespace {

constexpr long long kIntMax = std::numeric_limits<int>::max();

// A step (or another identifying integer cell) of a CSV row: a DataError thrown in any case.
int identity_int_cell(const std::string& path, const CsvLine& row, size_t column,
                      const char* what) {
    long long v = 0;
    if (!c_parse_int(row.cells[column], 0, kIntMax, &v))
        throw DataError(path, row.line,
                        std::string(what) + " '" + row.cells[column].substr(0, 80) +
                            "' is not an integer in [0, 2^31)");
    return static_cast<int>(v);
}

std::uint64_t identity_seed_cell(const std::string& path, const CsvLine& row, size_t column) {
    std::uint64_t v = 0;
    if (!c_parse_uint64(row.cells[column], &v))
        throw DataError(
            path, row.line,
            "seed '" + row.cells[column].substr(0, 80) + "' is not a 64-bit unsigned integer");
    return v;
}

// A value cell: false (after reporting, or throwing when `issues` is null) when not a number.
bool value_cell(const std::string& path, const CsvLine& row, size_t column, const char* what,
                double* out, std::vector<DataError>* issues) {
    if (c_parse_double(row.cells[column], out)) return true;
    return report_csv_issue(
        issues, path, row.line,
        std::string(what) + " '" + row.cells[column].substr(0, 80) + "' is not a number");
}

bool count_cell(const std::string& path, const CsvLine& row, size_t column, const char* what,
                long long hi, long long* out, std::vector<DataError>* issues) {
    if (c_parse_int(row.cells[column], 0, hi, out)) return true;
    return report_csv_issue(issues, path, row.line,
                            std::string(what) + " '" + row.cells[column].substr(0, 80) +
                                "' is not a non-negative integer");
}

// Type-checked fields of a JSON object: absent (the fallback) when of another type.
std::string json_text(const nlohmann::json& o, const char* key) {
    if (!o.is_object()) return {};
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<long long> json_integer(const nlohmann::json& o, const char* key) {
    if (!o.is_object()) return std::nullopt;
    const auto it = o.find(key);
    if (it == o.end() || !it->is_number_integer()) return std::nullopt;
    if (it->is_number_unsigned() &&
        it->get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<long long>::max()))
        return std::nullopt;
    return it->get<long long>();
}

const nlohmann::json& json_member(const nlohmann::json& o, const char* key) {
    static const nlohmann::json null_value;
    if (!o.is_object()) return null_value;
    const auto it = o.find(key);
    return it == o.end() ? null_value : *it;
}

std::optional<std::uint64_t> json_seed(const nlohmann::json& v) {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<long long>() >= 0)
        return static_cast<std::uint64_t>(v.get<long long>());
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (d >= 0 && d < 1.8e19 && std::floor(d) == d) return static_cast<std::uint64_t>(d);
    }
    return std::nullopt;
}

}  // namespace

// ---- CSV ------------------------------------------------------------------------------------

std::string format_metrics_rows(const std::vector<MetricPoint>& points) {
    std::string rows;
    for (const auto& p : points)
        rows += csv_row({std::to_string(p.step), p.method, std::to_string(p.seed), p.metric,
                         c_shortest(p.value)});
    return rows;
}

std::vector<MetricRow> read_metrics_csv(const std::string& path, std::vector<DataError>* issues) {
    std::vector<MetricRow> out;
    for (const auto& row : read_csv_rows(path, run_folder::kMetricsColumns, 5, issues)) {
        MetricRow r;
        r.step = identity_int_cell(path, row, 0, "step");
        r.method = row.cells[1];
        r.seed = identity_seed_cell(path, row, 2);
        r.metric = row.cells[3];
        if (!value_cell(path, row, 4, "value", &r.value, issues)) continue;
        out.push_back(std::move(r));
    }
    return out;
}

std::string format_spectra_rows(const std::vector<SpectrumPoint>& spectra) {
    std::string rows;
    for (const auto& s : spectra)
        for (size_t i = 0; i < s.singular_values.size(); ++i)
            rows += csv_row({std::to_string(s.step), s.method, std::to_string(s.seed),
                             std::to_string(i), c_shortest(s.singular_values[i])});
    return rows;
}

std::vector<SpectrumRow> read_spectra_csv(const std::string& path, std::vector<DataError>* issues) {
    std::vector<SpectrumRow> out;
    for (const auto& row : read_csv_rows(path, run_folder::kSpectraColumns, 5, issues)) {
        SpectrumRow r;
        r.step = identity_int_cell(path, row, 0, "step");
        r.method = row.cells[1];
        r.seed = identity_seed_cell(path, row, 2);
        long long index = 0;
        if (!count_cell(path, row, 3, "index", 1 << 30, &index, issues) ||
            !value_cell(path, row, 4, "sigma", &r.sigma, issues))
            continue;
        r.index = static_cast<int>(index);
        out.push_back(std::move(r));
    }
    return out;
}

std::string format_traces_rows(const std::vector<TracePoint>& traces) {
    std::string rows;
    for (const auto& t : traces)
        rows += csv_row({std::to_string(t.step), t.method, std::to_string(t.seed),
                         std::to_string(t.coordinate), c_general(t.value, 9)});
    return rows;
}

std::vector<TracePoint> read_traces_csv(const std::string& path, std::vector<DataError>* issues) {
    std::vector<TracePoint> out;
    for (const auto& row : read_csv_rows(path, run_folder::kTracesColumns, 5, issues)) {
        TracePoint t;
        t.step = identity_int_cell(path, row, 0, "step");
        t.method = row.cells[1];
        t.seed = identity_seed_cell(path, row, 2);
        long long coordinate = 0;
        if (!count_cell(path, row, 3, "coordinate", kIntMax, &coordinate, issues) ||
            !value_cell(path, row, 4, "value", &t.value, issues))
            continue;
        t.coordinate = static_cast<int>(coordinate);
        out.push_back(std::move(t));
    }
    return out;
}

std::string format_dwells_rows(const std::string& method, std::uint64_t seed,
                               const std::vector<std::int64_t>& dwells) {
    std::string rows;
    for (const auto d : dwells) rows += csv_row({method, std::to_string(seed), std::to_string(d)});
    return rows;
}

std::vector<DwellRow> read_dwells_csv(const std::string& path, std::vector<DataError>* issues) {
    std::vector<DwellRow> out;
    for (const auto& row : read_csv_rows(path, run_folder::kDwellsColumns, 3, issues)) {
        DwellRow r;
        r.method = row.cells[0];
        r.seed = identity_seed_cell(path, row, 1);
        long long dwell = 0;
        if (!count_cell(path, row, 2, "dwell", std::numeric_limits<long long>::max(), &dwell,
                        issues))
            continue;
        r.dwell = dwell;
        out.push_back(std::move(r));
    }
    return out;
}

std::string format_events_rows(const std::vector<EventRow>& events) {
    std::string rows;
    for (const auto& e : events)
        rows += csv_row({std::to_string(e.step), e.method, std::to_string(e.seed), e.key,
                         c_shortest(e.old_value), c_shortest(e.new_value)});
    return rows;
}

std::vector<EventRow> read_events_csv(const std::string& path, std::vector<DataError>* issues) {
    std::vector<EventRow> out;
    for (const auto& row : read_csv_rows(path, run_folder::kEventsColumns, 6, issues)) {
        EventRow e;
        e.step = identity_int_cell(path, row, 0, "step");
        e.method = row.cells[1];
        e.seed = identity_seed_cell(path, row, 2);
        e.key = row.cells[3];
        if (!value_cell(path, row, 4, "old", &e.old_value, issues) ||
            !value_cell(path, row, 5, "new", &e.new_value, issues))
            continue;
        out.push_back(std::move(e));
    }
    return out;
}

// ---- JSON -----------------------------------------------------------------------------------

nlohmann::json read_json_object(const std::string& path) {
    auto j = read_json_file(path);
    if (!j.is_object()) throw DataError(path, 0, "not a JSON object");
    return j;
}

SpecRecord spec_record_of(nlohmann::json spec) {
    SpecRecord s;
    s.json = std::move(spec);
    const auto& j = s.json;
    s.name = json_text(j, "name");
    if (j.is_object() && j.contains("schema_version")) {
        s.schema_version = json_integer(j, "schema_version");
        s.schema_version_bad = !s.schema_version;
    }
    const auto& task = json_member(j, "task");
    s.task_kind = json_text(task, "kind");
    s.task_target = json_text(task, "target");
    s.task_resolution = json_integer(task, "resolution");
    s.output_dim = json_integer(json_member(j, "data"), "output_dim").value_or(0);
    s.batch_size = json_integer(j, "batch_size").value_or(0);
    s.steps = json_integer(j, "steps").value_or(0);
    const auto& seeds = json_member(j, "seeds");
    if (seeds.is_array()) {
        s.seed_count = seeds.size();
        for (const auto& v : seeds)
            if (const auto seed = json_seed(v)) s.seeds.push_back(*seed);
    } else if (seeds.is_number()) {
        s.seed_count = 1;
        if (const auto seed = json_seed(seeds)) s.seeds.push_back(*seed);
    }
    const auto& methods = json_member(j, "methods");
    if (methods.is_array())
        for (const auto& m : methods) {
            SpecRecord::Method method;
            if (m.is_string()) {
                method.name = m.get<std::string>();
                method.label = method.name;
            } else {
                method.name = json_text(m, "name");
                method.label = json_text(m, "label");
                if (method.label.empty()) method.label = method.name;
            }
            if (!method.label.empty()) s.methods.push_back(std::move(method));
        }
    const auto& sweep = json_member(j, "sweep");
    s.sweep_key = json_text(sweep, "key");
    if (json_member(sweep, "values").is_array()) s.sweep_values = json_member(sweep, "values");
    const auto& backbone = json_member(j, "backbone");
    const std::string icnn_script = json_text(json_member(j, "icnn"), "script");
    if (json_text(backbone, "kind") == "torchscript")
        s.model_file = json_text(backbone, "script");
    else
        s.model_file = icnn_script;
    const auto& shard = json_member(j, "shard");
    s.shard_index = json_integer(shard, "index");
    s.shard_count = json_integer(shard, "count");
    return s;
}

SpecRecord read_spec_json(const std::string& path) {
    return spec_record_of(read_json_object(path));
}

std::optional<double> RunRecord::sweep_number() const {
    if (sweep_value && sweep_value->is_number()) return sweep_value->get<double>();
    return std::nullopt;
}

SummaryRecord summary_record_of(nlohmann::json summary) {
    SummaryRecord s;
    s.json = std::move(summary);
    s.status = json_text(s.json, "status");
    const auto& runs = json_member(s.json, "runs");
    s.has_runs = s.json.is_object() && s.json.contains("runs");
    s.runs_list = runs.is_array();
    if (!s.runs_list) return s;
    for (const auto& entry : runs) {
        RunRecord r;
        r.json = entry;
        r.method = json_text(entry, "method");
        r.name = json_text(entry, "name");
        r.seed = json_seed(json_member(entry, "seed"));
        r.status = json_text(entry, "status");
        r.step = json_integer(entry, "step").value_or(0);
        r.reason = json_text(entry, "reason");
        const auto& final = json_member(entry, "final");
        r.has_final = final.is_object();
        if (r.has_final)
            for (const auto& [k, v] : final.items())
                if (v.is_number()) r.final[k] = v.get<double>();
        const auto& warnings = json_member(entry, "warnings");
        if (warnings.is_array())
            for (const auto& w : warnings)
                if (w.is_string()) r.warnings.push_back(w.get<std::string>());
        if (entry.is_object() && entry.contains("sweep_value"))
            r.sweep_value = entry["sweep_value"];
        s.runs.push_back(std::move(r));
    }
    return s;
}

SummaryRecord read_summary_json(const std::string& path) {
    return summary_record_of(read_json_object(path));
}

}  // namespace liftlab
