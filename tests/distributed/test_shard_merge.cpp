// Sweeps over a cluster: `run --shard K/N` slices of a (sweep value × seed) grid, merged back into
// one run folder that equals the unsharded run's summary; and the merges that must be refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "run/merge_runs.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/progress.h"
#include "training/runner.h"

using liftlab::test::has;
using nlohmann::json;

namespace {

liftlab::ExperimentSpec sweep_spec() {
    return liftlab::parse_spec(json::parse(R"({
        "name": "shard-sweep",
        "task": {"input_dim": 4, "output_dim": 2, "teacher_hidden": [16], "n_train": 256,
                 "n_test": 64, "noise": 0.05},
        "backbone": {"hidden": [16], "feature_dim": 8},
        "methods": [{"name": "adam", "lr": 0.003}, {"name": "cf-prox", "lambda": 1.0}],
        "batch_size": 16, "steps": 20, "log_every": 10, "seeds": [0, 1], "threads": 1,
        "sweep": {"key": "batch_size", "values": [8, 16, 32]}})"));
}

// sweep_spec() cut to 4 steps and 2 swept values: the merges that must be refused or allowed.
liftlab::ExperimentSpec short_sweep_spec() {
    auto spec = sweep_spec();
    spec.steps = 4;
    spec.log_every = 2;
    spec.sweep.values.resize(2);
    return spec;
}

json read_json(const std::string& path) {
    std::ifstream in(path);
    return json::parse(in);
}

// Rows of metrics.csv without the wall-clock metrics (they differ from run to run).
std::multiset<std::string> metric_rows(const std::string& dir) {
    std::ifstream in(dir + "/metrics.csv");
    std::multiset<std::string> rows;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line))
        if (!has(line, ",time_s,") && !has(line, ",solve_fraction,")) rows.insert(line);
    return rows;
}

std::string merge_error(const std::vector<std::string>& dirs, const std::string& out) {
    try {
        liftlab::merge_shard_runs(dirs, out);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected the merge to be refused";
    return "";
}

std::vector<std::string> run_shards(const liftlab::ExperimentSpec& spec, int count,
                                    const std::string& out) {
    std::vector<std::string> dirs;
    for (int k = 0; k < count; ++k) {
        liftlab::RunOptions o;
        o.out_dir = out;
        o.shard = {k, count};
        dirs.push_back(liftlab::run_experiment(spec, o).run_dir);
    }
    return dirs;
}

}  // namespace

TEST(ShardMerge, FourShardsMergedEqualTheUnshardedSweep) {
    liftlab::test::TempDir tmp;
    const auto spec = sweep_spec();
    liftlab::RunOptions whole;
    whole.out_dir = tmp.file("whole");
    const auto full = liftlab::run_experiment(spec, whole);
    // 3 values × 2 seeds = 6 cells over 4 shards: shards 0 and 1 get two cells, 2 and 3 one.
    const auto dirs = run_shards(spec, 4, tmp.file("shards"));
    EXPECT_EQ(read_json(dirs[0] + "/summary.json")["runs"].size(), 4u);
    EXPECT_EQ(read_json(dirs[3] + "/summary.json")["runs"].size(), 2u);
    EXPECT_EQ(read_json(dirs[2] + "/spec.json")["shard"], json({{"index", 2}, {"count", 4}}));

    // Given in any order.
    const std::string merged =
        liftlab::merge_shard_runs({dirs[2], dirs[0], dirs[3], dirs[1]}, tmp.file("merged"));
    const auto a = read_json(full.run_dir + "/summary.json");
    const auto b = read_json(merged + "/summary.json");
    EXPECT_EQ(b["status"], a["status"]);
    ASSERT_EQ(b["runs"].size(), a["runs"].size());
    for (size_t i = 0; i < a["runs"].size(); ++i) {
        auto ra = a["runs"][i], rb = b["runs"][i];
        for (auto* r : {&ra, &rb}) {
            (*r)["final"].erase("time_s");  // wall clock
            (*r)["final"].erase("solve_fraction");
        }
        EXPECT_EQ(rb, ra) << "run " << i;  // same order, same numbers (deterministic runs)
    }
    EXPECT_EQ(metric_rows(merged), metric_rows(full.run_dir));
    auto spec_a = read_json(full.run_dir + "/spec.json"), spec_b = read_json(merged + "/spec.json");
    EXPECT_FALSE(spec_b.contains("shard"));
    EXPECT_EQ(spec_b["merged_from"].size(), 4u);
    spec_b.erase("merged_from");
    EXPECT_EQ(spec_b, spec_a);
}

// A shard written by an earlier LiftLab lacks keys added since; at their defaults it is the same
// experiment, and merges. The same missing key at a non-default value in the other shard does not.
TEST(ShardMerge, AShardWithoutKeysAddedSinceMergesWhenTheyAreAtTheirDefaults) {
    liftlab::test::TempDir tmp;
    const auto spec = short_sweep_spec();
    const auto dirs = run_shards(spec, 2, tmp.file("a"));
    auto older = read_json(dirs[1] + "/spec.json");
    ASSERT_TRUE(older.contains("fork_state_every"));
    ASSERT_TRUE(older.contains("log_initial"));
    older.erase("fork_state_every");
    older.erase("log_initial");
    std::ofstream(dirs[1] + "/spec.json") << older.dump(2);
    // Compared as written (no resolver), the older shard differs; as the spec reader resolves
    // them (what `liftlab-cli merge` passes), they are one experiment.
    EXPECT_TRUE(has(merge_error(dirs, tmp.file("w")), "different spec"));
    const liftlab::SpecResolver resolve = [](const json& j) {
        return liftlab::to_json(liftlab::parse_recorded_spec(j));
    };
    const std::string merged = liftlab::merge_shard_runs(dirs, tmp.file("m"), resolve);
    EXPECT_EQ(metric_rows(merged).size(),
              metric_rows(dirs[0]).size() + metric_rows(dirs[1]).size());

    auto changed = read_json(dirs[0] + "/spec.json");
    changed["fork_state_every"] = 3;
    std::ofstream(dirs[0] + "/spec.json") << changed.dump(2);
    try {
        liftlab::merge_shard_runs(dirs, tmp.file("n"), resolve);
        ADD_FAILURE() << "a non-default value of a key the other shard lacks must be refused";
    } catch (const std::exception& e) {
        EXPECT_TRUE(has(e.what(), "/fork_state_every")) << e.what();
    }
}

TEST(ShardMerge, RefusesShardsOfDifferentSpecsMissingShardsAndPlainRuns) {
    liftlab::test::TempDir tmp;
    const auto spec = short_sweep_spec();
    const auto dirs = run_shards(spec, 2, tmp.file("a"));
    auto other = spec;
    other.methods[1].lambda = 5.0;
    const auto other_dirs = run_shards(other, 2, tmp.file("b"));

    const std::string diff = merge_error({dirs[0], other_dirs[1]}, tmp.file("m"));
    EXPECT_TRUE(has(diff, "different spec")) << diff;
    EXPECT_TRUE(has(diff, "/methods/1/lambda")) << diff;
    EXPECT_TRUE(has(merge_error({dirs[0]}, tmp.file("m")), "missing shard(s) 1 of 2"));
    EXPECT_TRUE(has(merge_error({dirs[0], dirs[0]}, tmp.file("m")), "given twice"));
    const auto plain = liftlab::run_experiment(spec, {tmp.file("plain")});
    EXPECT_TRUE(has(merge_error({plain.run_dir}, tmp.file("m")), "is not a shard"));
    auto three = run_shards(spec, 3, tmp.file("c"));
    EXPECT_TRUE(has(merge_error({dirs[0], three[1]}, tmp.file("m")), "is a shard of 3"));
    // An unfinished shard (killed, or still running) is refused.
    std::ofstream(dirs[1] + "/summary.json") << R"({"status": "running", "runs": []})";
    EXPECT_TRUE(has(merge_error({dirs[0], dirs[1]}, tmp.file("m")), "has not finished"));
}

// A shard's progress runs over its own cells: it ends at 100 %, not at its share of the grid.
TEST(ShardMerge, AShardsProgressEndsAtOneHundredPercent) {
    liftlab::test::TempDir tmp;
    const auto spec = sweep_spec();
    for (int k = 0; k < 4; ++k) {
        liftlab::RunOptions o;
        o.out_dir = tmp.file("s" + std::to_string(k));
        o.shard = {k, 4};
        double last = -1;
        const auto r = liftlab::run_experiment(spec, o, [&](const liftlab::ProgressUpdate& u) {
            if (u.phase == "train") last = u.fraction;
            return true;
        });
        ASSERT_EQ(r.status, liftlab::RunStatus::Ok);
        EXPECT_DOUBLE_EQ(last, 1.0) << "shard " << k;
    }
}
