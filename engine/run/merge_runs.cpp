#include "run/merge_runs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "run/run_store.h"

namespace liftlab {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_shard_json(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("merge: cannot read " + path);
    try {
        return json::parse(in);
    } catch (const std::exception& e) {
        throw std::runtime_error("merge: " + path + " is not valid JSON: " + e.what());
    }
}

// The spec without what legitimately differs between shards.
json comparable(json spec) {
    spec.erase("shard");
    spec.erase("versions");
    return spec;
}

// The rows of a CSV file after its header; a last line without its newline (a row cut by a
// killed writer) is dropped, as the readers do.
std::string rows_of(const std::string& path, std::string* header) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "";
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const auto first = text.find('\n');
    if (first == std::string::npos) return "";
    if (header->empty()) *header = text.substr(0, first + 1);
    text = text.substr(first + 1);
    const auto last = text.rfind('\n');
    return last == std::string::npos ? "" : text.substr(0, last + 1);
}

struct ShardRun {
    std::string dir;
    json spec, summary;
    int index = 0;
};

ShardRun read_shard(const std::string& dir) {
    ShardRun s;
    s.dir = dir;
    s.spec = read_shard_json(dir + "/" + run_folder::kSpec);
    s.summary = read_shard_json(dir + "/" + run_folder::kSummary);
    if (!s.spec.contains("shard"))
        throw std::runtime_error("merge: " + dir +
                                 " is not a shard (its spec.json has no \"shard\"; run it "
                                 "with --shard K/N)");
    s.index = s.spec["shard"].value("index", -1);
    const std::string status = s.summary.value("status", "");
    const auto parsed = parse_run_status(status);
    if (!parsed || *parsed == RunStatus::Running)
        throw std::runtime_error("merge: shard " + dir + " has not finished (status '" + status +
                                 "')");
    return s;
}

// Every shard of one run, each once: same spec, same count, every index present. Returns the
// shards in index order.
void check_shard_set(std::vector<ShardRun>& shards) {
    const auto& first = shards.front();
    const int count = first.spec["shard"].value("count", 0);
    const json reference = comparable(first.spec);
    std::vector<std::string> owner(std::max(count, 0));
    for (const auto& s : shards) {
        if (s.spec["shard"].value("count", 0) != count)
            throw std::runtime_error("merge: " + s.dir + " is a shard of " +
                                     std::to_string(s.spec["shard"].value("count", 0)) + " but " +
                                     first.dir + " one of " + std::to_string(count));
        const json diff = json::diff(reference, comparable(s.spec));
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
    const json seeds = first.spec.value("seeds", json::array());
    const json values = first.spec.contains("sweep")
                            ? first.spec["sweep"].value("values", json::array())
                            : json::array();
    auto cell_of = [&](const json& run) {
        int vi = 0, si = 0;
        if (run.contains("sweep_value"))
            vi = static_cast<int>(std::find(values.begin(), values.end(), run["sweep_value"]) -
                                  values.begin());
        si = static_cast<int>(std::find(seeds.begin(), seeds.end(), run["seed"]) - seeds.begin());
        return vi * static_cast<int>(seeds.size()) + si;
    };
    json runs = json::array();
    bool any_cancelled = false, any_ok = false;
    for (const auto& s : shards) {
        any_cancelled = any_cancelled || s.summary.value("status", "") == RunStatus::Cancelled;
        for (const auto& r : s.summary.value("runs", json::array())) {
            runs.push_back(r);
            const auto st = parse_run_status(r.value("status", ""));
            any_ok = any_ok || st == RunStatus::Ok || st == RunStatus::Cancelled;
        }
    }
    std::stable_sort(runs.begin(), runs.end(),
                     [&](const json& a, const json& b) { return cell_of(a) < cell_of(b); });
    *status = any_cancelled ? RunStatus::Cancelled : (any_ok ? RunStatus::Ok : RunStatus::Diverged);
    return runs;
}

// The shards' files, joined in shard order, into the new folder `dir`.
void write_merged_files(const std::vector<ShardRun>& shards, const std::string& dir) {
    json spec = shards.front().spec;
    spec.erase("shard");
    spec["merged_from"] = json::array();
    for (const auto& s : shards) spec["merged_from"].push_back(fs::absolute(s.dir).string());
    write_file_atomic(dir + "/" + run_folder::kSpec, spec.dump(2) + "\n");
    for (const char* file :
         {run_folder::kMetrics, run_folder::kSpectra, run_folder::kTraces, run_folder::kDwells}) {
        std::string header, body;
        for (const auto& s : shards) body += rows_of(s.dir + "/" + file, &header);
        if (!header.empty()) write_file_atomic(dir + "/" + file, header + body);
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
                             const std::string& out_parent) {
    if (shard_dirs.empty()) throw std::runtime_error("merge: no shard folders given");
    std::vector<ShardRun> shards;
    for (const auto& dir : shard_dirs) shards.push_back(read_shard(dir));
    check_shard_set(shards);
    RunStatus status = RunStatus::Ok;
    const json runs = merged_runs(shards, &status);
    std::string dir;
    {
        const auto store =
            RunStore::create(out_parent, shards.front().spec.value("name", "merged"));
        dir = store.dir();
    }
    write_merged_files(shards, dir);
    write_file_atomic(dir + "/" + run_folder::kSummary,
                      json{{"status", to_string(status)}, {"runs", runs}}.dump(2) + "\n");
    return dir;
}

}  // namespace liftlab
