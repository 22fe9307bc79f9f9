// The claims table (engine/claims/): every registry entry runs as written, the verdicts follow
// their tests on run folders with known values, time to target reads the curves, and the
// validation split holds rows out of training without touching the test split.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "claims/claim_evaluation.h"
#include "claims/claim_registry.h"
#include "claims/claims_runner.h"
#include "core/errors.h"
#include "data/dataset.h"
#include "run/folder_lock.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "test_helpers.h"
#include "training/progress.h"

namespace liftlab::claims {
namespace {

using test::TempDir;

struct FakeRun {
    std::string method, at;
    std::uint64_t seed;
    std::map<std::string, double> final;
    std::string status = "ok";
};

// A run folder with summary.json (and optionally metrics.csv rows) holding the given finals.
std::string write_run(const TempDir& tmp, const std::string& name, const std::vector<FakeRun>& runs,
                      const std::string& metrics_csv = "") {
    const auto dir = std::filesystem::path(tmp.str()) / name;
    std::filesystem::create_directories(dir);
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : runs) {
        nlohmann::json e = {{"method", r.at.empty() ? r.method : r.method + "@batch_size=" + r.at},
                            {"name", r.method},
                            {"seed", r.seed},
                            {"status", r.status},
                            {"final", r.final}};
        if (!r.at.empty()) e["sweep_value"] = std::stoi(r.at);
        arr.push_back(e);
    }
    std::ofstream(dir / "summary.json") << nlohmann::json{{"status", "ok"}, {"runs", arr}}.dump();
    std::ofstream(dir / "spec.json")
        << nlohmann::json{{"name", name}, {"versions", {{"blas_core", "Haswell"}}}}.dump();
    std::ofstream(dir / "metrics.csv") << "step,method,seed,metric,value\n" << metrics_csv;
    return dir.string();
}

Claim better_claim(bool lower, bool log_scale) {
    Claim c;
    c.id = "test-better";
    c.test = TestKind::Better;
    c.cmp.metric = "m";
    c.cmp.a = "a";
    c.cmp.b = "b";
    c.cmp.lower_is_better = lower;
    c.cmp.log_scale = log_scale;
    return c;
}

std::vector<FakeRun> two_groups(const std::vector<double>& a, const std::vector<double>& b,
                                const std::string& metric = "m", const std::string& at = "") {
    std::vector<FakeRun> runs;
    for (size_t i = 0; i < a.size(); ++i) runs.push_back({"a", at, i, {{metric, a[i]}}});
    for (size_t i = 0; i < b.size(); ++i) runs.push_back({"b", at, i, {{metric, b[i]}}});
    return runs;
}

// Every entry of the registry: recipes that parse as specs, the compared methods and the sweep
// value present in every tier's run, tuning grids of equal size whose overrides apply.
TEST(ClaimsRegistry, EveryClaimRunsAsWritten) {
    std::set<std::string> ids;
    for (const auto& c : claim_registry()) {
        SCOPED_TRACE(c.id);
        EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id";
        EXPECT_FALSE(c.text.empty());
        EXPECT_FALSE(c.paper.empty());
        EXPECT_TRUE(c.full.runs()) << "every claim has a full-tier run";
        for (const Tier tier : {Tier::Tiny, Tier::Fast, Tier::Full}) {
            const Recipe& r = c.recipe(tier);
            if (!r.runs()) continue;
            SCOPED_TRACE(to_string(tier));
            nlohmann::json j = load_spec_source(r.preset);
            for (const auto& s : r.sets) apply_override(j, s);
            ExperimentSpec spec;
            ASSERT_NO_THROW(spec = parse_spec(j));
            EXPECT_GE(r.seeds, 2) << "a test needs two seeds per method";
            std::set<std::string> labels;
            for (const auto& m : spec.methods) labels.insert(m.label);
            for (const auto& m : {c.cmp.a, c.cmp.b})
                if (!m.empty()) EXPECT_TRUE(labels.count(m)) << m;
            for (const auto& m : c.cmp.variants) EXPECT_TRUE(labels.count(m)) << m;
            if (!c.cmp.at.empty()) {
                bool found = false;
                for (const auto& v : spec.sweep.values) found = found || v.dump() == c.cmp.at;
                EXPECT_TRUE(found) << "sweep value " << c.cmp.at;
            }
            for (const auto& axis : c.tuning.axes) {
                EXPECT_EQ(axis.settings.size(), c.tuning.axes.front().settings.size());
                for (const auto& setting : axis.settings) {
                    nlohmann::json t = j;
                    for (const auto& s : setting) ASSERT_NO_THROW(apply_override(t, s));
                    apply_override(t, "task.split=validation");
                    EXPECT_NO_THROW(parse_spec(t));
                }
            }
        }
    }
    EXPECT_NE(find_claim("theorem1-ablation"), nullptr);
    EXPECT_EQ(find_claim("no-such-claim"), nullptr);
    // The authors' seed counts where their scripts state them.
    EXPECT_EQ(find_claim("lifter-1d-tv")->full.seeds, 30);
    EXPECT_EQ(find_claim("cpflow-basin-8g")->full.seeds, 100);
    EXPECT_GE(find_claim("theorem1-ablation")->full.seeds, 10);
    EXPECT_THROW(parse_tier("medium"), std::invalid_argument);
}

TEST(ClaimsEvaluation, BetterHoldsRefutesOrAsksForSeeds) {
    TempDir tmp;
    const Claim c = better_claim(true, true);
    // Clearly lower: holds.
    auto v =
        evaluate_claim(c, read_run_table(write_run(
                              tmp, "r1", two_groups({0.010, 0.012, 0.011}, {0.15, 0.13, 0.17}))));
    EXPECT_EQ(v.verdict, "holds");
    EXPECT_LT(v.p, 1e-3);
    EXPECT_EQ(v.seeds, "3 / 3");
    EXPECT_NE(v.interval.find("ratio"), std::string::npos);
    // The reverse: refuted.
    v = evaluate_claim(c, read_run_table(write_run(
                              tmp, "r2", two_groups({0.15, 0.13, 0.17}, {0.010, 0.012, 0.011}))));
    EXPECT_EQ(v.verdict, "refuted");
    EXPECT_GT(v.p, 0.99);
    // Overlapping: inconclusive, with the seeds the measured effect would need.
    v = evaluate_claim(
        c, read_run_table(write_run(tmp, "r3", two_groups({1.0, 1.2, 0.9}, {1.1, 1.25, 0.95}))));
    EXPECT_EQ(v.verdict, "inconclusive");
    EXPECT_NE(v.needed.find("seeds per method"), std::string::npos);
    // A failed seed is left out and named.
    auto runs = two_groups({0.010, 0.012, 0.011}, {0.15, 0.13, 0.17});
    runs[0].status = "diverged";
    v = evaluate_claim(c, read_run_table(write_run(tmp, "r4", runs)));
    EXPECT_EQ(v.seeds, "2 / 3");
    ASSERT_FALSE(v.notes.empty());
    EXPECT_NE(v.notes.front().find("diverged"), std::string::npos);
    // One seed only: no test.
    v = evaluate_claim(c, read_run_table(write_run(tmp, "r5", two_groups({0.01}, {0.1, 0.2}))));
    EXPECT_EQ(v.verdict, "inconclusive");
    EXPECT_TRUE(std::isnan(v.p));
}

// An exit rate of 0 has no log: the log-scale test falls back to the values themselves (Welch on
// a = {3, 4, 5}·1e-3, b = {0, 1e-4, 0}: t = 6.86 on ≈ 2.0 df, one-sided p ≈ 0.010).
TEST(ClaimsEvaluation, ZeroValuesAreTestedOnTheLinearScale) {
    TempDir tmp;
    Claim c = better_claim(false, true);
    auto v = evaluate_claim(
        c, read_run_table(write_run(tmp, "z", two_groups({3e-3, 4e-3, 5e-3}, {0, 1e-4, 0}))));
    EXPECT_EQ(v.verdict, "holds");
    EXPECT_GT(v.p, 1e-3);
    EXPECT_LT(v.p, 0.05);
    EXPECT_EQ(v.test.find("log"), std::string::npos) << v.test;
    EXPECT_EQ(v.ours.find("ratio"), std::string::npos) << v.ours;
    ASSERT_FALSE(v.notes.empty());
    EXPECT_NE(v.notes.back().find("≤ 0"), std::string::npos);
    // No test at all still names itself.
    v = evaluate_claim(c, read_run_table(write_run(tmp, "z1", two_groups({3e-3}, {0, 0}))));
    EXPECT_EQ(v.verdict, "inconclusive");
    EXPECT_FALSE(v.test.empty());
}

TEST(ClaimsEvaluation, NonInferiorityAndEquivalenceUseTheirMargins) {
    TempDir tmp;
    // Accuracy, higher is better, margin 0.005: a 0.002 below b with tiny spread is non-inferior;
    // 0.02 below is refuted.
    Claim c = better_claim(false, false);
    c.test = TestKind::NonInferior;
    c.cmp.margin = 0.005;
    auto v = evaluate_claim(
        c, read_run_table(write_run(
               tmp, "n1", two_groups({0.900, 0.901, 0.899, 0.900}, {0.902, 0.903, 0.901, 0.902}))));
    EXPECT_EQ(v.verdict, "holds");
    v = evaluate_claim(
        c, read_run_table(write_run(
               tmp, "n2", two_groups({0.880, 0.881, 0.879, 0.880}, {0.902, 0.903, 0.901, 0.902}))));
    EXPECT_EQ(v.verdict, "refuted");
    // Equivalence within ±10 % on a log scale: ratio 1.01 with a small spread holds, ratio 1.5
    // is refuted (a worse than b beyond the margin), a wide spread is inconclusive.
    Claim e = better_claim(true, true);
    e.test = TestKind::Equivalent;
    e.cmp.margin = 0.10;
    v = evaluate_claim(
        e, read_run_table(write_run(
               tmp, "e1", two_groups({1.01, 1.02, 1.00, 1.01}, {1.00, 1.01, 0.99, 1.00}))));
    EXPECT_EQ(v.verdict, "holds");
    EXPECT_NE(v.interval.find("90 %"), std::string::npos);
    v = evaluate_claim(
        e, read_run_table(write_run(
               tmp, "e2", two_groups({1.50, 1.52, 1.49, 1.51}, {1.00, 1.01, 0.99, 1.00}))));
    EXPECT_EQ(v.verdict, "refuted");
    ASSERT_FALSE(v.notes.empty());
    EXPECT_NE(v.notes.back().find("worse"), std::string::npos);
    v = evaluate_claim(
        e, read_run_table(write_run(tmp, "e3", two_groups({0.7, 1.4, 1.0}, {1.0, 0.8, 1.3}))));
    EXPECT_EQ(v.verdict, "inconclusive");
}

// Theorem 1's combination: the lifter's p-values are all at the permutation floor, an ablation's
// are uniform-like (holds) or small (refuted); a structural zero and an exact zero are named.
TEST(ClaimsEvaluation, CrossCovarianceCombinesTheSeedsByFishersMethod) {
    TempDir tmp;
    Claim c;
    c.test = TestKind::CrossCovariance;
    c.cmp.metric = "sigma2_jac";
    c.cmp.a = "lifter";
    c.cmp.variants = {"lifter-noslack", "lifter-nobody", "lifter-decoupled"};
    auto make = [&](const std::string& name, const std::vector<double>& decoupled_p,
                    double decoupled_spread = 2e-6) {
        std::vector<FakeRun> runs;
        for (std::uint64_t s = 0; s < decoupled_p.size(); ++s) {
            runs.push_back({"lifter",
                            "",
                            s,
                            {{"slack", 1},
                             {"sigma2_jac", -4e-4},
                             {"p_value", 1.0 / 1001},
                             {"sigma2_jac_null_sd", 5e-5}}});
            runs.push_back({"lifter-noslack", "", s, {{"slack", 0}, {"sigma2_jac", 0}}});
            runs.push_back(
                {"lifter-nobody",
                 "",
                 s,
                 {{"slack", 1}, {"sigma2_jac", 0}, {"p_value", 1}, {"sigma2_jac_null_sd", 0}}});
            runs.push_back({"lifter-decoupled",
                            "",
                            s,
                            {{"slack", 1},
                             {"sigma2_jac", 2e-5 + decoupled_spread * (s % 2 ? 1.0 : -1.0)},
                             {"p_value", decoupled_p[s]},
                             {"sigma2_jac_null_sd", 1.5e-5}}});
        }
        return read_run_table(write_run(tmp, name, runs));
    };
    auto v = evaluate_claim(c, make("x1", {0.9, 0.5, 0.3, 0.7, 0.2, 0.6, 0.45, 0.8, 0.35, 0.55}));
    EXPECT_EQ(v.verdict, "holds");
    EXPECT_LT(v.p, 1e-20);  // ten seeds at 1/1001: −2Σlog p = 138 on 20 df
    EXPECT_NE(v.ours.find("structural 0"), std::string::npos);
    EXPECT_NE(v.ours.find("exactly 0"), std::string::npos);
    EXPECT_NE(v.ours.find("5 % of the lifter"), std::string::npos);  // |2e-5 / −4e-4|
    v = evaluate_claim(c, make("x2", {0.01, 0.02, 0.04, 0.03, 0.2, 0.01, 0.05, 0.02, 0.06, 0.03}));
    EXPECT_EQ(v.verdict, "refuted");
    EXPECT_NE(v.ours.find("lifter-decoupled"), std::string::npos);
    // Not rejected is not shown to vanish. Decoupled σ²_Jac = 2e-5 ± 2e-6 over 10 seeds is 5 % ±
    // 0.5 % of the lifter's 4e-4: within ±10 % by TOST (t = (0.10 − 0.05)/(0.0053/√10) ≈ 30,
    // p ≈ 1e-10). With a spread of ±6e-5 (±15 %) on 3 seeds the same mean is not: TOST on 2 df,
    // t = (0.10 − 0.05)/(0.173/√3) ≈ 0.5, p ≈ 0.33: inconclusive, with the seeds it would need.
    v = evaluate_claim(c, make("x1", {0.9, 0.5, 0.3, 0.7, 0.2, 0.6, 0.45, 0.8, 0.35, 0.55}));
    EXPECT_NE(v.ours.find("TOST p = "), std::string::npos) << v.ours;
    EXPECT_NE(v.test.find("±10 %"), std::string::npos) << v.test;
    v = evaluate_claim(c, make("x3", {0.9, 0.5, 0.3}, 6e-5));
    EXPECT_EQ(v.verdict, "inconclusive");
    ASSERT_FALSE(v.notes.empty());
    EXPECT_NE(v.notes.back().find("lifter-decoupled: not distinguishable from 0"),
              std::string::npos)
        << v.notes.back();
    EXPECT_FALSE(v.needed.empty());
}

TEST(ClaimsEvaluation, BasinSharesUseTheAntimodeOfThePooledLosses) {
    TempDir tmp;
    Claim c;
    c.test = TestKind::Basin;
    c.cmp.metric = "test_loss";
    c.cmp.a = "lifter";
    c.cmp.b = "softplus";
    std::vector<double> lifter, softplus;
    for (int i = 0; i < 10; ++i) lifter.push_back(0.8 + 0.05 * std::sin(i));
    for (int i = 0; i < 10; ++i) softplus.push_back(3.55 + 0.01 * std::cos(i));
    std::vector<FakeRun> runs;
    for (int i = 0; i < 10; ++i)
        runs.push_back({"lifter", "", std::uint64_t(i), {{"test_loss", lifter[i]}}});
    for (int i = 0; i < 10; ++i)
        runs.push_back({"softplus", "", std::uint64_t(i), {{"test_loss", softplus[i]}}});
    const auto v = evaluate_claim(c, read_run_table(write_run(tmp, "b1", runs)));
    EXPECT_EQ(v.verdict, "holds");
    // 10/10 against 0/10: Fisher's exact p = 1/C(20, 10).
    EXPECT_NEAR(v.p, 1.0 / 184756, 1e-12);
    EXPECT_NE(v.ours.find("lifter 10/10"), std::string::npos);
}

TEST(ClaimsEvaluation, SweepValuesAndTimeToTargetAreReadFromTheFolder) {
    TempDir tmp;
    Claim c = better_claim(true, true);
    c.cmp.at = "4";
    // Curves: a reaches 0.2 (the worse final mean) at step 20 in both seeds, b at step 40 in one.
    const std::string csv =
        "10,a@batch_size=4,0,m,0.5\n10,a@batch_size=4,0,time_s,1\n"
        "20,a@batch_size=4,0,m,0.15\n20,a@batch_size=4,0,time_s,2\n"
        "10,a@batch_size=4,1,m,0.6\n10,a@batch_size=4,1,time_s,1\n"
        "20,a@batch_size=4,1,m,0.1\n20,a@batch_size=4,1,time_s,3\n"
        "20,b@batch_size=4,0,m,0.5\n40,b@batch_size=4,0,m,0.19\n"
        "20,b@batch_size=4,1,m,0.5\n40,b@batch_size=4,1,m,0.21\n";
    auto runs = two_groups({0.1, 0.11}, {0.19, 0.21}, "m", "4");
    runs.push_back({"a", "8", 0, {{"m", 5.0}}});  // another sweep value: ignored
    const auto t = read_run_table(write_run(tmp, "s1", runs, csv));
    EXPECT_EQ(t.blas_core, "Haswell");
    EXPECT_EQ(t.values("m", "a", "4").size(), 2u);
    EXPECT_EQ(t.values("m", "a", "8").size(), 1u);
    EXPECT_EQ(t.label_of("a", "4"), "a@batch_size=4");
    const auto tt = time_to_target(t.dir, "a@batch_size=4", "m", 0.2, true);
    EXPECT_EQ(tt.reached, 2);
    EXPECT_EQ(tt.mean_steps, 20);
    EXPECT_EQ(tt.mean_seconds, 2.5);
    const auto tb = time_to_target(t.dir, "b@batch_size=4", "m", 0.2, true);
    EXPECT_EQ(tb.reached, 1);
    EXPECT_EQ(tb.seeds, 2);
    EXPECT_TRUE(std::isnan(tb.mean_seconds));  // no time_s logged
    const auto v = evaluate_claim(c, t);
    EXPECT_NE(v.time_to_target.find("a 20 steps (2.5 s), 2/2 seeds"), std::string::npos)
        << v.time_to_target;
}

// The files are written after every claim: until the check ends they say "running", so a folder
// read mid-check (or left by a killed one) is not taken for a finished one.
TEST(ClaimsRunner, FilesWrittenMidCheckSayRunningAndTheLastOnesOk) {
    TempDir tmp;
    ClaimsOptions o;
    o.tier = Tier::Tiny;
    o.out_dir = tmp.str();
    o.only = {"cf-ridge-small-batch", "lifter-1d-tv"};
    std::string seen;
    ClaimsCallbacks cb;
    cb.note = [&](const std::string& line) {
        if (line.rfind("claim 2/", 0) != 0) return;
        for (const auto& e : std::filesystem::directory_iterator(tmp.str())) {
            std::ifstream in(e.path() / "claims.json");
            const auto j = nlohmann::json::parse(in);
            seen = j.at("status").get<std::string>() + " " + std::to_string(j.at("claims").size());
        }
    };
    const auto report = run_claims(o, cb);
    EXPECT_EQ(seen, "running 1");
    std::ifstream in(std::filesystem::path(report.dir) / "claims.json");
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j.at("status"), "ok");
    EXPECT_EQ(j.at("claims").size(), 2u);
    std::ifstream md(std::filesystem::path(report.dir) / "claims.md");
    std::stringstream text;
    text << md.rdbuf();
    EXPECT_NE(text.str().find(", finished "), std::string::npos);
}

// A check stopped mid-sub-run (a killed or cancelled full tier) continues that sub-run from its
// saved states on --resume, and ends where an uninterrupted check ends, value for value.
TEST(ClaimsRunner, AResumedCheckContinuesItsUnfinishedSubRunToTheSameNumbers) {
    auto finals = [](const std::string& claims_dir) {
        std::ifstream in(std::filesystem::path(claims_dir) / "claims.json");
        const auto j = nlohmann::json::parse(in);
        const auto run = std::filesystem::path(claims_dir) / j.at("claims").at(0).at("run_dir");
        std::ifstream summary(run / "summary.json");
        std::vector<double> out;
        for (const auto& r : nlohmann::json::parse(summary).at("runs"))
            out.push_back(r.at("final").at("test_loss").get<double>());
        return std::make_pair(run.parent_path(), out);
    };
    TempDir whole, stopped;
    ClaimsOptions o;
    o.tier = Tier::Tiny;
    o.only = {"cf-ridge-small-batch"};
    o.out_dir = whole.str();
    const auto reference = finals(run_claims(o).dir);

    std::atomic<bool> stop{false};
    o.out_dir = stopped.str();
    o.stop = &stop;
    ClaimsCallbacks cb;
    cb.progress = [&](const ProgressUpdate& u) {
        if (u.phase == "train" && u.fraction >= 0.5) stop = true;
        return true;
    };
    const auto first = run_claims(o, cb);
    ASSERT_FALSE(first.dir.empty());
    ClaimsOptions again;
    again.resume_dir = first.dir;
    std::vector<std::string> notes;
    ClaimsCallbacks cb2;
    cb2.note = [&](const std::string& line) { notes.push_back(line); };
    run_claims(again, cb2);
    const bool continued = std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
        return n.find(": continuing ") != std::string::npos;
    });
    EXPECT_TRUE(continued) << "the stopped sub-run was run again from its start";
    const auto [runs, values] = finals(first.dir);
    EXPECT_EQ(values, reference.second);
    // The one folder of the sub-run: continued, not joined by a second one.
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(runs),
                            std::filesystem::directory_iterator()),
              2);  // the run folder and the recipe file
}

// A check killed inside its first claim (the process gone, nothing written after) leaves a folder
// --resume reads: its claims.json names the options from the start, and the sub-run continues.
// The kill is a copy of the folder taken mid-sub-run: what a dead process leaves behind.
TEST(ClaimsRunner, AFolderKilledInItsFirstClaimIsResumed) {
    TempDir live, killed;
    ClaimsOptions o;
    o.tier = Tier::Tiny;
    o.only = {"cf-ridge-small-batch"};
    o.out_dir = live.str();
    std::string copy;
    ClaimsCallbacks cb;
    cb.progress = [&](const ProgressUpdate& u) {
        if (u.phase != "train" || u.fraction < 0.5 || !copy.empty()) return true;
        for (const auto& e : std::filesystem::directory_iterator(live.str())) {
            copy = (std::filesystem::path(killed.str()) / e.path().filename()).string();
            std::filesystem::copy(e.path(), copy, std::filesystem::copy_options::recursive);
        }
        return true;
    };
    const auto whole = run_claims(o, cb);
    ASSERT_FALSE(copy.empty());
    {
        std::ifstream in(std::filesystem::path(copy) / "claims.json");
        ASSERT_TRUE(in) << "a check killed in its first claim left no claims.json";
        const auto j = nlohmann::json::parse(in);
        EXPECT_EQ(j.at("status"), "running");
        EXPECT_EQ(j.at("claims").size(), 0u);
    }
    ClaimsOptions again;
    again.resume_dir = copy;
    std::vector<std::string> notes;
    ClaimsCallbacks cb2;
    cb2.note = [&](const std::string& line) { notes.push_back(line); };
    const auto resumed = run_claims(again, cb2);
    EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
        return n.find(": continuing ") != std::string::npos;
    })) << "the killed sub-run was run again from its start";
    ASSERT_EQ(resumed.rows.size(), 1u);
    ASSERT_EQ(whole.rows.size(), 1u);
    EXPECT_EQ(resumed.rows[0].preset.verdict, whole.rows[0].preset.verdict);
    EXPECT_EQ(resumed.rows[0].preset.p, whole.rows[0].preset.p);
}

// One check writes a claims folder at a time: resuming a folder another check holds is refused
// with the reason, and the running check names itself in the folder's lock file.
TEST(ClaimsRunner, AFolderAnotherCheckHoldsIsRefusedAndTheWriterNamesItself) {
    TempDir tmp;
    ClaimsOptions o;
    o.tier = Tier::Tiny;
    o.out_dir = tmp.str();
    o.only = {"escape"};
    std::string lock_note;
    std::string dir;
    ClaimsCallbacks cb;
    cb.note = [&](const std::string& line) {
        if (line.rfind("claim 1/", 0) != 0) return;
        for (const auto& e : std::filesystem::directory_iterator(tmp.str())) {
            dir = e.path().string();
            std::ifstream in(e.path() / "resume" / "lock");
            std::getline(in, lock_note);
        }
    };
    const auto first = run_claims(o, cb);
    EXPECT_EQ(dir, first.dir);
    EXPECT_NE(lock_note.find(" " + std::to_string(::getpid())), std::string::npos) << lock_note;
    bool refused = false;
    {
        const FolderLock held(first.dir);  // another process's check, as far as flock goes
        // flock locks belong to the open file description: a second open in this process
        // conflicts like another process would.
        ClaimsOptions again;
        again.resume_dir = first.dir;
        try {
            run_claims(again);
        } catch (const std::runtime_error& e) {
            refused = std::string(e.what()).find("another LiftLab process") != std::string::npos;
        }
    }
    EXPECT_TRUE(refused);
    ClaimsOptions after;
    after.resume_dir = first.dir;
    EXPECT_NO_THROW(run_claims(after));  // free again once the holder is gone
}

TEST(ClaimsRunner, RecipesPrintAsCommands) {
    Recipe r{
        "icnn-ablation", {"diagnostics.permutations=1000", R"(methods=[{"name":"lifter"}])"}, 10};
    EXPECT_EQ(recipe_command(r),
              "liftlab-cli run icnn-ablation --seeds 10 --set diagnostics.permutations=1000 "
              "--set 'methods=[{\"name\":\"lifter\"}]'");
    EXPECT_EQ(recipe_command(Recipe{}), "");
}

// task.split = validation: the last 20 % of the training rows are scored and leave training; the
// test split is never part of it.
TEST(ValidationSplit, HoldsOutTheTailOfTheTrainingRows) {
    ExperimentSpec spec = parse_spec(load_spec_source("cf-regression"));
    const Dataset full = make_dataset(spec.task);
    auto j = to_json(spec);
    j["task"]["split"] = "validation";
    const ExperimentSpec val = parse_spec(j);
    EXPECT_EQ(to_json(val)["task"]["split"], "validation");
    const Dataset d = make_dataset(val.task);
    const int64_t n = full.n_train(), n_val = std::llround(0.2 * n);
    EXPECT_EQ(d.n_train(), n - n_val);
    EXPECT_EQ(d.n_test(), n_val);
    EXPECT_TRUE(torch::equal(d.x_train, full.x_train.narrow(0, 0, n - n_val)));
    EXPECT_TRUE(torch::equal(d.x_test, full.x_train.narrow(0, n - n_val, n_val)));
    EXPECT_TRUE(torch::equal(d.y_test, full.y_train.narrow(0, n - n_val, n_val)));
    // Classification keeps labels aligned; the test split's reference values are dropped.
    auto cm = to_json(parse_spec(load_spec_source("cf-class-count-sweep")));
    cm["sweep"] = {{"key", ""}, {"values", nlohmann::json::array()}};
    cm["task"]["n_train"] = 500;
    cm["task"]["n_test"] = 100;
    const Dataset c_full = make_dataset(parse_spec(cm).task);
    cm["task"]["split"] = "validation";
    cm["task"]["validation_fraction"] = 0.1;
    const Dataset c_val = make_dataset(parse_spec(cm).task);
    EXPECT_EQ(c_val.n_test(), 50);
    EXPECT_TRUE(torch::equal(c_val.labels_test, c_full.labels_train.narrow(0, 450, 50)));
    EXPECT_TRUE(c_val.reference.empty());
    EXPECT_FALSE(c_full.reference.empty());
}

TEST(ValidationSplit, RefusalsNameTheirKey) {
    auto expect_key = [](nlohmann::json j, const std::string& key) {
        try {
            parse_spec(j);
            ADD_FAILURE() << "accepted";
        } catch (const SpecError& e) {
            EXPECT_EQ(e.key(), key) << e.what();
        }
    };
    auto j = load_spec_source("cf-regression");
    j["task"]["split"] = "train";
    expect_key(j, "task.split");
    j["task"]["split"] = "validation";
    j["task"]["validation_fraction"] = 1.0;
    expect_key(j, "task.validation_fraction");
    auto d = load_spec_source("cf-dfiv-demand");
    d["task"]["split"] = "validation";
    expect_key(d, "task.split");
    auto c = load_spec_source("cpflow-demo-2d");
    c["task"]["split"] = "validation";
    expect_key(c, "task.split");
    auto p = load_spec_source("icnn-ablation");
    p["diagnostics"]["permutations"] = 2000000;
    expect_key(p, "diagnostics.permutations");
}

}  // namespace
}  // namespace liftlab::claims
