// Resuming a killed run (training/resume.h): the state archive round-trips exactly and refuses
// damaged bytes with a DataError; a run stopped after any log point and resumed gives the final
// metrics and rows of the uninterrupted run; a finished run, a live one, a run without saved
// state and a method without resumable state are refused with the reason.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "core/errors.h"
#include "run/folder_lock.h"
#include "run/run_store.h"
#include "run/state_archive.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/progress.h"
#include "training/resume.h"
#include "training/runner.h"

namespace liftlab {
namespace {

TEST(StateArchive, RoundTripsEveryKindExactly) {
    StateArchive a;
    a.put("f32", torch::randn({3, 4}));
    a.put("f64", torch::tensor({1.0, -0.0, std::numeric_limits<double>::infinity()}));
    a.put("i64", torch::arange(5, torch::kLong));
    a.put("u8", torch::tensor({0, 255}, torch::kUInt8));
    a.put("empty", torch::zeros({0, 7}));
    a.put_int("n", -42);
    a.put_real("nan", std::nan(""));
    a.put_text("t", "line one\nnon-ASCII θ̃ \"quoted\"");
    std::mt19937_64 rng(99);
    rng();
    a.put_rng("rng", rng);
    a.put_tensors("list", {torch::ones({2}), torch::zeros({1, 1}, torch::kFloat64)});
    const auto b = StateArchive::parse(a.serialize(), "test");
    for (const char* k : {"f32", "f64", "i64", "u8", "empty"}) {
        EXPECT_TRUE(torch::equal(a.tensor(k), b.tensor(k))) << k;
        EXPECT_EQ(a.tensor(k).scalar_type(), b.tensor(k).scalar_type()) << k;
    }
    EXPECT_EQ(b.integer("n"), -42);
    EXPECT_TRUE(std::isnan(b.real("nan")));
    EXPECT_EQ(b.text("t"), "line one\nnon-ASCII θ̃ \"quoted\"");
    std::mt19937_64 back;
    b.rng("rng", back);
    EXPECT_EQ(back(), rng());
    EXPECT_EQ(b.tensors("list").size(), 2u);
    EXPECT_THROW(b.integer("t"), DataError);  // wrong kind
    EXPECT_THROW(b.tensor("nothing"), DataError);
}

TEST(StateArchive, DamagedBytesAreDataErrorsNeverCrashes) {
    StateArchive a;
    a.put("w", torch::randn({16, 16}));
    a.put_int("n", 3);
    const std::string good = a.serialize();
    int refused = 0;
    // Every truncation, and a byte flipped at every position of the header and index.
    for (size_t cut = 0; cut < good.size(); cut += 7) {
        try {
            StateArchive::parse(good.substr(0, cut), "cut");
        } catch (const DataError&) {
            ++refused;
        }
    }
    const size_t index_end = good.find("\n", good.find("\n", 16) + 1) + 1;
    for (size_t i = 0; i < index_end; ++i) {
        std::string bad = good;
        bad[i] = static_cast<char>(bad[i] ^ 0x5a);
        try {
            const auto b = StateArchive::parse(bad, "flip");
            (void)b;  // parsed: a flip inside a JSON string or number may still be valid
        } catch (const DataError&) {
            ++refused;
        }
    }
    EXPECT_GT(refused, 0);
    // Offsets and sizes pointing outside the data.
    const std::string hostile =
        std::string("LIFTLAB-STATE 1\n") +
        R"({"w":{"tensor":"float32","shape":[1000000000,1000000000],"offset":0,"bytes":4}})";
    const std::string text = hostile.substr(16);
    const std::string file = "LIFTLAB-STATE 1\n" + std::to_string(text.size()) + "\n" + text + "\n";
    EXPECT_THROW(StateArchive::parse(file, "huge"), DataError);
}

ExperimentSpec small_cf_spec() {
    return parse_spec(nlohmann::json::parse(R"({
        "name": "resume-test",
        "task": {"kind": "teacher-regression", "n_train": 512, "n_test": 128},
        "backbone": {"hidden": [32], "feature_dim": 16},
        "methods": [{"name": "adam", "lr": 0.001}, {"name": "cf-prox", "lambda": 10},
                    {"name": "cf-rls", "lambda": 10, "rho": 0.9}],
        "steps": 60, "log_every": 10, "seeds": [0, 1], "threads": 1, "save_state_seconds": 0,
        "diagnostics": {"spectrum_every": 20}})"));
}

std::string read_text(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// metrics.csv without the wall-clock rows.
std::string untimed_metrics(const std::string& dir) {
    std::istringstream in(read_text(dir + "/metrics.csv"));
    std::string line, out;
    while (std::getline(in, line))
        if (line.find(",time_s,") == std::string::npos &&
            line.find(",solve_fraction,") == std::string::npos)
            out += line + "\n";
    return out;
}

// A run of `spec` into `dir`, stopped as Ctrl-C stops it just before its `at`-th step counted over
// all its units (with one thread, the units run one after the other).
RunResult stopped_run(const ExperimentSpec& spec, const std::string& dir, int at) {
    std::atomic<bool> stop{false};
    int steps_seen = 0;
    RunOptions options;
    options.out_dir = dir;
    options.stop = &stop;
    options.before_step = [&] {
        if (++steps_seen == at) stop = true;
    };
    return run_experiment(spec, options);
}

// The run a resume plan (prepare_resume's) continues, written into its own folder under `out_dir`.
RunResult resumed_run(const ExperimentSpec& spec, std::shared_ptr<const ResumePlan> plan,
                      const std::string& out_dir) {
    RunOptions options;
    options.out_dir = out_dir;
    options.resume = std::move(plan);
    return run_experiment(spec, options);
}

// The process that writes a run takes its lock as the writer and names itself in the file (the
// window reads it to tell a killed run from a live one); a probe takes the lock and leaves the
// file as it is; a second taker while the lock is held is refused.
TEST(FolderLockTest, TheWriterNamesItselfAndAProbeLeavesTheNote) {
    liftlab::test::TempDir dir;
    const std::string file = dir.str() + "/resume/lock";
    auto note = [&] {
        std::ifstream f(file);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    };
    char host[256] = {};
    ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
    const std::string mine = std::string(host) + " " + std::to_string(::getpid()) + "\n";
    {
        const FolderLock writer(dir.str(), /*writer=*/true);
        EXPECT_EQ(note(), mine);
        EXPECT_THROW(FolderLock probe(dir.str()), std::runtime_error);
    }
    { std::ofstream(file) << "another-host 12\n"; }
    {
        const FolderLock probe(dir.str());
        EXPECT_EQ(note(), "another-host 12\n");
    }
    const FolderLock writer(dir.str(), /*writer=*/true);
    EXPECT_EQ(note(), mine);  // the other note replaced whole
}

TEST(Resume, StoppedAtEveryLogPointThenResumedGivesTheUninterruptedRun) {
    const auto spec = small_cf_spec();
    test::TempDir out;
    RunOptions full_options;
    full_options.out_dir = out.file("full");
    const auto full = run_experiment(spec, full_options);
    // Stop (as Ctrl-C does) right after step k of the second seed's unit, for several k: the
    // folder is cancelled; --resume continues it. With a state at every log point, and with the
    // default cadence of one every 30 s (none within this short unit: it runs again from step 0).
    const std::pair<int, double> stops[] = {{1, 0.0}, {10, 0.0}, {35, 0.0}, {60, 0.0}, {35, 30.0}};
    for (const auto& [stop_at, cadence] : stops) {
        auto spec_at = spec;
        spec_at.save_state_seconds = cadence;
        std::atomic<bool> stop{false};
        int steps_seen = 0;
        RunOptions options;
        options.out_dir = out.file("stopped" + std::to_string(stop_at));
        options.stop = &stop;
        options.before_step = [&] {
            if (++steps_seen == spec.steps + stop_at) stop = true;  // seed 0 done, seed 1 at k
        };
        const auto stopped = run_experiment(spec_at, options);
        ASSERT_EQ(stopped.status, RunStatus::Cancelled);
        const auto plan = prepare_resume(stopped.run_dir, resumable_spec(stopped.run_dir));
        // Seed 1's unit saved a state at each of its log points before the stop (none before
        // step 10: it then starts afresh after seed 0's finished state).
        const int saved = cadence > 0 ? 0 : (stop_at - 1) / spec.log_every * spec.log_every;
        ASSERT_EQ(plan->units.size(), saved > 0 ? 2u : 1u);
        EXPECT_TRUE(plan->units.at(0).finished);
        if (saved > 0) EXPECT_EQ(plan->units.at(1).step, saved);
        RunOptions resume;
        resume.out_dir = out.str();
        resume.resume = plan;
        // Its progress starts where the run stands (seed 0 done, seed 1 at its saved step), not
        // at 0 %, and ends at 100 %.
        std::vector<double> fractions;
        const auto resumed =
            run_experiment(resumable_spec(stopped.run_dir), resume, [&](const ProgressUpdate& u) {
                if (u.phase == "train") fractions.push_back(u.fraction);
                return true;
            });
        ASSERT_EQ(resumed.status, RunStatus::Ok);
        ASSERT_FALSE(fractions.empty());
        EXPECT_GE(fractions.front(), double(spec.steps + saved) / (2 * spec.steps)) << stop_at;
        EXPECT_DOUBLE_EQ(fractions.back(), 1.0) << stop_at;
        ASSERT_EQ(resumed.runs.size(), full.runs.size());
        for (size_t i = 0; i < full.runs.size(); ++i)
            for (const auto& [k, v] : full.runs[i].final_metrics) {
                if (k == "time_s" || k == "solve_fraction") continue;
                EXPECT_EQ(resumed.runs[i].final_metrics.at(k), v)
                    << full.runs[i].method << " seed " << full.runs[i].seed << " " << k
                    << " after a stop at step " << stop_at;
            }
        EXPECT_EQ(untimed_metrics(stopped.run_dir), untimed_metrics(full.run_dir)) << stop_at;
        EXPECT_EQ(read_text(stopped.run_dir + "/spectra.csv"),
                  read_text(full.run_dir + "/spectra.csv"));
    }
}

TEST(Resume, RefusesWhatCannotBeResumedWithTheReason) {
    test::TempDir out;
    RunOptions options;
    options.out_dir = out.str();
    auto spec = small_cf_spec();
    spec.seeds = {0};
    spec.steps = 20;
    const auto done = run_experiment(spec, options);
    auto expect = [](const std::function<void()>& f, const std::string& needle) {
        try {
            f();
            ADD_FAILURE() << "expected a refusal mentioning '" << needle << "'";
        } catch (const std::exception& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expect([&] { prepare_resume(done.run_dir, spec); }, "nothing to resume");
    // A live run: another process holds the folder's lock.
    std::atomic<bool> stop{true};
    options.stop = &stop;
    const auto stopped = run_experiment(spec, options);
    {
        FolderLock held(stopped.run_dir);
        expect([&] { prepare_resume(stopped.run_dir, spec); }, "another LiftLab process");
    }
    EXPECT_NO_THROW(prepare_resume(stopped.run_dir, spec));
    // No saved state.
    auto off = spec;
    off.save_state = false;
    const auto unsaved = run_experiment(off, options);
    expect([&] { prepare_resume(unsaved.run_dir, off); }, "save_state off");
    // An edited spec.json (one byte more): the states continue the spec they were saved under.
    // (A run stopped at step 15, its state saved at step 10.)
    std::atomic<bool> halt{false};
    int seen = 0;
    RunOptions at15;
    at15.out_dir = out.str();
    at15.stop = &halt;
    at15.before_step = [&] {
        if (++seen == 15) halt = true;
    };
    const auto saved = run_experiment(spec, at15);
    ASSERT_TRUE(std::filesystem::exists(unit_state_path(saved.run_dir, 0)));
    const std::string spec_file = saved.run_dir + "/spec.json";
    std::string original;
    {
        std::ifstream in(spec_file, std::ios::binary);
        original.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    std::ofstream(spec_file, std::ios::app) << " ";
    expect([&] { prepare_resume(saved.run_dir, spec); }, "changed since the run saved its state");
    std::ofstream(spec_file, std::ios::binary | std::ios::trunc) << original;
    EXPECT_NO_THROW(prepare_resume(saved.run_dir, spec));
    // Damage: a state file that is not one.
    std::ofstream(unit_state_path(stopped.run_dir, 0)) << "garbage";
    expect([&] { prepare_resume(stopped.run_dir, spec); }, "not a LiftLab state file");
}

TEST(Resume, AUnitWithoutSavedTrainersRunsAgainFromItsStart) {
    // DFIV's trainer keeps no resumable state: a stopped unit restarts from step 0 and the run
    // still ends with the uninterrupted run's numbers (the first seed's unit is kept as it was).
    const auto dfiv = parse_spec(nlohmann::json::parse(R"({
        "name": "dfiv-resume", "task": {"kind": "dfiv-demand", "n_train": 600},
        "methods": [{"name": "dfiv-prox"}], "batch_size": 64, "steps": 40, "log_every": 10,
        "seeds": [0, 1], "threads": 1, "save_state_seconds": 0})"));
    test::TempDir out;
    RunOptions full_options;
    full_options.out_dir = out.file("full");
    const auto full = run_experiment(dfiv, full_options);
    const auto stopped = stopped_run(dfiv, out.file("stopped"), dfiv.steps + 25);
    ASSERT_EQ(stopped.status, RunStatus::Cancelled);
    const auto plan = prepare_resume(stopped.run_dir, dfiv);
    ASSERT_TRUE(plan->units.at(1).restart);
    RunOptions resume;
    resume.out_dir = out.str();
    resume.resume = plan;
    const auto resumed = run_experiment(dfiv, resume);
    ASSERT_EQ(resumed.status, RunStatus::Ok);
    for (size_t i = 0; i < full.runs.size(); ++i)
        for (const auto& [k, v] : full.runs[i].final_metrics)
            if (k != "time_s" && k != "solve_fraction")
                EXPECT_EQ(resumed.runs[i].final_metrics.at(k), v) << k;
    EXPECT_EQ(untimed_metrics(stopped.run_dir), untimed_metrics(full.run_dir));
}

// Two seeds training side by side (threads 2, as most presets have it): the second seed's unit
// writes its rows aside until the first is done (resume/unit1.rows/), and its states record
// those files ("held"). So a stop (Ctrl-C, the window's Stop) and a kill both keep each seed's
// progress: the folder below is stopped, or copied as a kill would leave it, with each seed's
// thread before its step 35 (states at steps 10, 20 and 30); resumed, both seeds continue from
// step 30 and the run ends with the uninterrupted run's numbers and rows. (Before, --resume
// refused the stopped folder, "unit 0 is not finished but a later one ran", and a kill lost the
// second seed's progress: hours on the 32-D latents.)
void expect_the_uninterrupted_run(const RunResult& full, const RunResult& resumed,
                                  const std::string& dir, const std::string& context) {
    ASSERT_EQ(resumed.status, RunStatus::Ok) << context;
    ASSERT_EQ(resumed.runs.size(), full.runs.size()) << context;
    for (size_t i = 0; i < full.runs.size(); ++i)
        for (const auto& [k, v] : full.runs[i].final_metrics)
            if (k != "time_s" && k != "solve_fraction")
                EXPECT_EQ(resumed.runs[i].final_metrics.at(k), v)
                    << context << ": " << full.runs[i].method << " seed " << full.runs[i].seed
                    << " " << k;
    EXPECT_EQ(untimed_metrics(dir), untimed_metrics(full.run_dir)) << context;
    EXPECT_EQ(read_text(dir + "/spectra.csv"), read_text(full.run_dir + "/spectra.csv")) << context;
    EXPECT_FALSE(std::filesystem::exists(unit_rows_aside_path(dir, 1))) << context;
}

// A folder with a held unit, damaged: its rows aside cut short, or a state that saw the run's
// files after a held one. --resume refuses each with the reason and cuts nothing.
void expect_damaged_held_folders_refused(const std::string& dir, const std::string& scratch) {
    namespace fs = std::filesystem;
    auto damaged = [&](const std::string& name) {
        const std::string copy = scratch + "/" + name;
        fs::create_directories(scratch);
        fs::copy(dir, copy, fs::copy_options::recursive);
        return copy;
    };
    auto refused = [](const std::string& folder, const std::string& needle) {
        const std::string before = read_text(folder + "/metrics.csv");
        try {
            prepare_resume(folder, resumable_spec(folder));
            ADD_FAILURE() << "expected a refusal mentioning '" << needle << "'";
        } catch (const std::exception& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
        EXPECT_EQ(read_text(folder + "/metrics.csv"), before) << "cut before the refusal";
    };
    const std::string shorter = damaged("rows-cut");
    const std::string rows = unit_rows_aside_path(shorter, 1) + "/metrics.csv";
    ASSERT_TRUE(fs::exists(rows));
    fs::resize_file(rows, fs::file_size(rows) / 2);
    refused(shorter, "is shorter");
    // Unit 0 marked held, unit 1 not: the run's files cannot hold unit 1's rows after unit 0's.
    const std::string swapped = damaged("held-first");
    for (int u : {0, 1}) {
        auto a = StateArchive::read_file(unit_state_path(swapped, u));
        a.put_int("held", u == 0 ? 1 : 0);
        write_file_atomic(unit_state_path(swapped, u), a.serialize(), /*durable=*/false);
    }
    refused(swapped, "wrote its rows aside");
}

TEST(Resume, SeedsSideBySideKeepTheirProgressThroughAStopOrAKill) {
    auto spec = small_cf_spec();
    spec.threads = 2;
    test::TempDir out;
    RunOptions full_options;
    full_options.out_dir = out.file("full");
    const auto full = run_experiment(spec, full_options);
    ASSERT_EQ(full.status, RunStatus::Ok);
    for (const bool kill : {false, true}) {
        const std::string context = kill ? "killed" : "stopped";
        std::atomic<bool> stop{false};
        std::atomic<int> arrived{0};
        std::string copy;
        RunOptions options;
        options.out_dir = out.file(context);
        options.stop = &stop;
        // Each seed's thread waits before its step 35 until the other is there too; then the
        // run stops, or its folder is copied (what a kill leaves) and it goes on.
        options.before_step = [&] {
            thread_local int steps = 0;  // each run's seeds start on threads of their own
            if (++steps != 35) return;
            if (++arrived == 2) {
                if (kill) {
                    const auto runs = std::filesystem::directory_iterator(options.out_dir);
                    copy = out.file("killed-copy");
                    std::filesystem::copy(runs->path(), copy,
                                          std::filesystem::copy_options::recursive);
                    ++arrived;
                } else {
                    stop = true;
                }
            }
            while (arrived.load() < (kill ? 3 : 2))
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        };
        const auto run = run_experiment(spec, options);
        ASSERT_GE(arrived.load(), 2) << context;
        std::string dir = run.run_dir;
        if (kill) {
            ASSERT_EQ(run.status, RunStatus::Ok);
            dir = copy;
        } else {
            ASSERT_EQ(run.status, RunStatus::Cancelled);
            // The stopped folder shows both seeds' rows, as the user saw them.
            EXPECT_NE(read_text(dir + "/metrics.csv").find("30,adam,1,test_loss,"),
                      std::string::npos);
        }
        if (!kill) expect_damaged_held_folders_refused(dir, out.file("damaged"));
        const auto plan = prepare_resume(dir, resumable_spec(dir));
        ASSERT_EQ(plan->units.size(), 2u) << context;
        for (int u : {0, 1}) {
            EXPECT_FALSE(plan->units.at(u).finished) << context << " unit " << u;
            EXPECT_EQ(plan->units.at(u).step, 30) << context << " unit " << u;
            EXPECT_EQ(plan->units.at(u).held, u == 1) << context << " unit " << u;
        }
        const auto resumed = resumed_run(resumable_spec(dir), plan, out.str());
        expect_the_uninterrupted_run(full, resumed, dir, context);
    }
}

// icnn-ebm-nd with an importance proposal adapted to the EBM (the 32-D latents' recipe, at a toy
// size): the adapted flow, its fit count and a pending refit are part of the saved state, so a
// stop mid-unit continues from the last log point (it ran again from step 0: hours lost on the
// latents) and ends with the uninterrupted run's numbers, refit count included.
TEST(Resume, AnAdaptedProposalRunContinuesMidUnitToTheSameNumbers) {
    test::TempDir out;
    auto j = nlohmann::json::parse(R"({
        "name": "adapted-resume",
        "task": {"kind": "icnn-ebm-nd", "target": "gaussian", "dim": 3, "n_train": 512,
                 "n_test": 256},
        "methods": [{"name": "lifter"}, {"name": "softplus"}],
        "icnn": {"width": 16, "proposal": "flow", "flow_layers": 2, "flow_hidden": 16,
                 "flow_fit_steps": 30, "is_samples": 256, "eval_is_samples": 1024,
                 "proposal_adapt_steps": 20, "proposal_adapt_train": true,
                 "proposal_adapt_target_ess": 0.99},
        "batch_size": 64, "steps": 40, "log_every": 10, "seeds": [0, 1], "threads": 1,
        "save_state_seconds": 0})");
    j["task"]["cache_dir"] = out.file("cache");
    const auto spec = parse_spec(j);
    RunOptions full_options;
    full_options.out_dir = out.file("full");
    const auto full = run_experiment(spec, full_options);
    ASSERT_EQ(full.status, RunStatus::Ok);
    const auto stopped = stopped_run(spec, out.file("stopped"), spec.steps + 25);  // seed 1 at 25
    ASSERT_EQ(stopped.status, RunStatus::Cancelled);
    const auto plan = prepare_resume(stopped.run_dir, spec);
    ASSERT_EQ(plan->units.size(), 2u);
    EXPECT_FALSE(plan->units.at(1).restart);
    EXPECT_EQ(plan->units.at(1).step, 20);
    const auto resumed = resumed_run(spec, plan, out.str());
    ASSERT_EQ(resumed.status, RunStatus::Ok);
    ASSERT_EQ(resumed.runs.size(), full.runs.size());
    bool refitted = false;
    for (size_t i = 0; i < full.runs.size(); ++i)
        for (const auto& [k, v] : full.runs[i].final_metrics) {
            if (k == "time_s" || k == "solve_fraction") continue;
            if (k == "proposal_train_refits" && v > 1) refitted = true;
            EXPECT_EQ(resumed.runs[i].final_metrics.at(k), v)
                << full.runs[i].method << " seed " << full.runs[i].seed << " " << k;
        }
    EXPECT_TRUE(refitted) << "no training-time refit: the pending-refit state went untested";
    EXPECT_EQ(untimed_metrics(stopped.run_dir), untimed_metrics(full.run_dir));
}

}  // namespace
}  // namespace liftlab
