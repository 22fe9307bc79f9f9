// `liftlab-cli merge DIR…`: joins the run folders of `run --shard K/N` (run/shard.h) into one run
// folder that report and the GUI open as a single run. Refuses folders that are not shards, shards
// of different specs (any key but "shard" and "versions"), unfinished shards, duplicates and
// missing shards. Torch-free.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace liftlab {

// Writes `<out_parent>/<spec name>-<time>` and returns its path. The merged summary lists the runs
// in the grid order of an unsharded run (sweep value, then seed, then method). Throws
// std::runtime_error naming the folder and, for a spec mismatch, the first differing key.
// `resolve`, when given, maps each shard's spec.json to its resolved form before the comparison
// (the spec reader's: every default written out), so that a shard written by an earlier LiftLab,
// without keys added since at their defaults, joins shards written now. It lives above this
// layer; a spec it throws on is compared as written.
using SpecResolver = std::function<nlohmann::json(const nlohmann::json&)>;
std::string merge_shard_runs(const std::vector<std::string>& shard_dirs,
                             const std::string& out_parent, const SpecResolver& resolve = {});

}  // namespace liftlab
