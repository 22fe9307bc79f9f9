#include "run/merge_runs.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/bounded_input.h"
#include "run/run_files.h"
#include "run/run_store.h"

namespace liftlab {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The spec without what legitimately differs between shards, resolved first when a resolver is
// given (a spec it refuses is compared as written).
json comparable(json spec, const SpecResolver& resolve) {
    spec.erase("shard");
    spec.erase("versions");
    if (resolve) {
        try {
            spec = resolve(spec);
            spec.erase("shard");
            spec.erase("versions");
        } catch (const std::exception&) {
        }
    }
    return spec;
}

// The rows of a run CSV file after its header, which must be `columns` (an empty string for a
// missing file); a last line without its newline (a row cut by a killed writer) is dropped, as
// the readers do. Bounded like every reader of the folder.
std::string shard_csv_rows(const std::string& path, const char* columns) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return "";
    const std::string text = read_regular_file(path, kMaxRunCsvBytes);
    const auto first = text.find('\n');
    if (first == std::string::npos) return "";
    if (text.compare(0, first, columns) != 0)
        throw DataError(path, 1, std::string("header is not '") + columns + "'");
    const auto last = text.rfind('\n');
    return text.substr(first + 1, last - first);
}

struct ShardRun {
    std::string dir;
    SpecRecord spec;
    SummaryRecord summary;
    int index = 0;
};

ShardRun read_shard(const std::string& dir) {
    ShardRun s;
    s.dir = dir;
    try {
        s.spec = read_spec_json(dir + "/" + run_folder::kSpec);
        s.summary = read_summary_json(dir + "/" + run_folder::kSummary);
    } catch (const DataError& e) {
        throw std::runtime_error(std::string("merge: ") + e.what());
    }
    if (!s.spec.json.contains("shard"))
        throw std::runtime_error("merge: " + dir +
                                 " is not a shard (its spec.json has no \"shard\"; run it "
                                 "with --shard K/N)");
    s.index = static_cast<int>(s.spec.shard_index.value_or(-1));
    const auto parsed = s.summary.run_status();
    if (!parsed || *parsed == RunStatus::Running)
        throw std::runtime_error("merge: shard " + dir + " has not finished (status '" +
                                 s.summary.status + "')");
    return s;
}

// Every shard of one run, each once: same spec, same count, every index present. Returns the
// shards in index order.
void check_shard_set(std::vector<ShardRun>& shards, const SpecResolver& resolve) {
    const auto& first = shards.front();
    const int count = static_cast<int>(first.spec.shard_count.value_or(0));
    const json reference = comparable(first.spec.json, resolve);
    std::vector<std::string> owner(std::max(count, 0));
    for (const auto& s : shards) {
        const long long its_count = s.spec.shard_count.value_or(0);
        if (its_count != count)
            throw std::runtime_error("merge: " + s.dir + " is a shard of " +
                                     std::to_string(its_count) + " but " + first.dir + " one of " +
                                     std::to_string(count));
        const json diff = json::diff(reference, comparable(s.spec.json, resolve));
        if (!diff.empty())
            throw std::runtime_error("merge: " + s.dir + " was run with a different spec than " +
                                     first.dir + " (first difference at " +
                                     diff.front().value("path", std::string("?")) + ")");
        if (s.index < 0 || s.index >= count)
            throw std::runtime_error("merge: " + s.dir + " has a bad shard index");
        if (!owner[s.index].empty())
            throw std::runtime_error("merge: shard " + std::to_string(s.index) + "/" +
                                     std::to_string(count) + " given twice (" + owner[s.index] +
                                     ", " + s.dir + ")");
        owner[s.index] = s.dir;
    }
    std::string missing;
    for (int k = 0; k < count; ++k)
        if (owner[k].empty()) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
    if (!missing.empty())
        throw std::runtime_error("merge: missing shard(s) " + missing + " of " +
                                 std::to_string(count));
    std::sort(shards.begin(), shards.end(),
              [](const ShardRun& a, const ShardRun& b) { return a.index < b.index; });
}

// Runs in an unsharded run's order: cell (sweep value index, seed index), then method order
// within a cell, which each shard already keeps. Sets the merged status.
json merged_runs(const std::vector<ShardRun>& shards, RunStatus* status) {
    const auto& first = shards.front();
    const json seeds = first.spec.json.value("seeds", json::array());
    const json& values = first.spec.sweep_values;
    auto cell_of = [&](const RunRecord& run) {
        int vi = 0;
        if (run.sweep_value)
            vi = static_cast<int>(std::find(values.begin(), values.end(), *run.sweep_value) -
                                  values.begin());
        const json seed = run.json.is_object() ? run.json.value("seed", json()) : json();
        const int si =
            static_cast<int>(std::find(seeds.begin(), seeds.end(), seed) - seeds.begin());
        return vi * static_cast<int>(seeds.size()) + si;
    };
    std::vector<const RunRecord*> order;
    bool any_cancelled = false, any_ok = false;
    for (const auto& s : shards) {
        any_cancelled = any_cancelled || s.summary.run_status() == RunStatus::Cancelled;
        for (const auto& r : s.summary.runs) {
            order.push_back(&r);
            const auto st = r.run_status();
            any_ok = any_ok || st == RunStatus::Ok || st == RunStatus::Cancelled;
        }
    }
    std::stable_sort(order.begin(), order.end(), [&](const RunRecord* a, const RunRecord* b) {
        return cell_of(*a) < cell_of(*b);
    });
    json runs = json::array();
    for (const auto* r : order) runs.push_back(r->json);
    *status = any_cancelled ? RunStatus::Cancelled : (any_ok ? RunStatus::Ok : RunStatus::Diverged);
    return runs;
}

// The shards' files, joined in shard order, into the new folder `dir`.
void write_merged_files(const std::vector<ShardRun>& shards, const std::string& dir) {
    json spec = shards.front().spec.json;
    spec.erase("shard");
    spec["merged_from"] = json::array();
    for (const auto& s : shards) spec["merged_from"].push_back(fs::absolute(s.dir).string());
    write_file_atomic(dir + "/" + run_folder::kSpec, spec.dump(2) + "\n");
    const std::pair<const char*, const char*> files[] = {
        {run_folder::kMetrics, run_folder::kMetricsColumns},
        {run_folder::kSpectra, run_folder::kSpectraColumns},
        {run_folder::kTraces, run_folder::kTracesColumns},
        {run_folder::kDwells, run_folder::kDwellsColumns},
        {run_folder::kEvents, run_folder::kEventsColumns}};
    for (const auto& [file, columns] : files) {
        bool any = false;
        std::string body;
        for (const auto& s : shards) {
            const std::string path = s.dir + "/" + file;
            std::error_code ec;
            any = any || fs::exists(path, ec);
            body += shard_csv_rows(path, columns);
        }
        if (any) write_file_atomic(dir + "/" + file, std::string(columns) + "\n" + body);
    }
    for (const auto& s : shards) {
        const fs::path traj = fs::path(s.dir) / run_folder::kTrajectories;
        if (!fs::is_directory(traj)) continue;
        fs::create_directories(fs::path(dir) / run_folder::kTrajectories);
        for (const auto& e : fs::directory_iterator(traj))
            fs::copy_file(e.path(), fs::path(dir) / run_folder::kTrajectories / e.path().filename(),
                          fs::copy_options::overwrite_existing);
    }
}

}  // namespace

std::string merge_shard_runs(const std::vector<std::string>& shard_dirs,
                             const std::string& out_parent, const SpecResolver& resolve) {
    if (shard_dirs.empty()) throw std::runtime_error("merge: no shard folders given");
    std::vector<ShardRun> shards;
    for (const auto& dir : shard_dirs) shards.push_back(read_shard(dir));
    check_shard_set(shards, resolve);
    RunStatus status = RunStatus::Ok;
    const json runs = merged_runs(shards, &status);
    std::string dir;
    {
        const auto store = RunStore::create(out_parent, shards.front().spec.name.empty()
                                                            ? std::string("merged")
                                                            : shards.front().spec.name);
        dir = store.dir();
    }
    write_merged_files(shards, dir);
    write_file_atomic(dir + "/" + run_folder::kSummary,
                      json{{"status", to_string(status)}, {"runs", runs}}.dump(2) + "\n");
    return dir;
}

}  // namespace liftlab
