// Seeds on several workers (issue 12): with `threads: 2` the seeds of a spec run two at a time (a
// single seed: its methods on two threads), each worker single-threaded, and the run folder must be
// the one a `threads: 1` run writes, row for row and bit for bit, except the wall-clock metrics
// (time_s, solve_fraction), which differ between any two runs.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "spec/presets.h"
#include "test_helpers.h"
#include "training/runner.h"

namespace {

std::vector<std::string> lines_of(const std::string& file, bool drop_timing) {
    std::ifstream in(file);
    EXPECT_TRUE(in.good()) << file;
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) {
        if (drop_timing && (line.find(",time_s,") != std::string::npos ||
                            line.find(",solve_fraction,") != std::string::npos))
            continue;
        out.push_back(line);
    }
    return out;
}

nlohmann::json final_without_timing(const std::string& run_dir) {
    std::ifstream in(run_dir + "/summary.json");
    auto j = nlohmann::json::parse(in);
    for (auto& r : j["runs"]) {
        r["final"].erase("time_s");
        r["final"].erase("solve_fraction");
    }
    return j;
}

// Runs `spec` sequentially (threads 1) and on two workers (threads 2) and compares the folders.
// Several seeds: one worker per seed; one seed: its methods on two threads.
void expect_parallel_equals_sequential(liftlab::ExperimentSpec spec) {
    const int expected_workers = spec.seeds.size() > 1 ? 2 : 1;
    liftlab::test::TempDir dir;
    int max_workers = 0;
    std::set<std::uint64_t> reported_seeds;
    spec.threads = 1;
    liftlab::RunOptions options;
    options.out_dir = dir.file("sequential");
    const auto seq = liftlab::run_experiment(spec, options);
    spec.threads = 2;
    options.out_dir = dir.file("parallel");
    const auto par = liftlab::run_experiment(spec, options, [&](const liftlab::ProgressUpdate& u) {
        max_workers = std::max(max_workers, static_cast<int>(u.workers.size()));
        for (const auto& w : u.workers) reported_seeds.insert(w.seed);
        return true;
    });
    ASSERT_EQ(seq.status, "ok");
    ASSERT_EQ(par.status, "ok");
    EXPECT_EQ(max_workers, expected_workers) << "every worker shows its progress";
    EXPECT_EQ(reported_seeds.size(), spec.seeds.size());

    const auto a = lines_of(seq.run_dir + "/metrics.csv", /*drop_timing=*/true);
    const auto b = lines_of(par.run_dir + "/metrics.csv", /*drop_timing=*/true);
    ASSERT_GT(a.size(), 1u);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "metrics.csv row " << i;
    EXPECT_EQ(final_without_timing(seq.run_dir), final_without_timing(par.run_dir));
    ASSERT_EQ(seq.runs.size(), par.runs.size());
    for (size_t i = 0; i < seq.runs.size(); ++i) {
        EXPECT_EQ(seq.runs[i].method, par.runs[i].method);
        EXPECT_EQ(seq.runs[i].seed, par.runs[i].seed);
    }
    if (std::filesystem::exists(seq.run_dir + "/dwells.csv"))
        EXPECT_EQ(lines_of(seq.run_dir + "/dwells.csv", false),
                  lines_of(par.run_dir + "/dwells.csv", false));
}

}  // namespace

TEST(ParallelSeeds, CfRegressionMatchesTheSequentialRunBitForBit) {
    auto spec = liftlab::parse_spec(liftlab::load_spec_source("cf-regression"));
    spec.steps = 40;
    spec.log_every = 10;
    spec.seeds = {0, 1, 2};
    expect_parallel_equals_sequential(spec);
}

TEST(ParallelSeeds, IcnnEbm1dMatchesTheSequentialRunBitForBit) {
    auto spec = liftlab::parse_spec(liftlab::load_spec_source("icnn-ebm-1d"));
    spec.steps = 12;
    spec.log_every = 6;
    spec.seeds = {0, 1, 2};
    expect_parallel_equals_sequential(spec);
}

TEST(ParallelSeeds, OneSeedsMethodsOnTwoThreadsMatchTheSequentialRun) {
    auto spec = liftlab::parse_spec(liftlab::load_spec_source("icnn-ebm-1d"));
    spec.steps = 12;
    spec.log_every = 5;  // chunks of 5, 5 and 2 steps between the sync points
    spec.seeds = {1};
    expect_parallel_equals_sequential(spec);
    auto cf = liftlab::parse_spec(liftlab::load_spec_source("cf-regression"));
    cf.steps = 30;
    cf.log_every = 10;
    cf.seeds = {0};
    expect_parallel_equals_sequential(cf);
}
