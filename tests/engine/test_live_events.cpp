// Events sent into a running run (training/live_events.h, issue 40): a change submitted mid-run
// gets a step every unit can still take, is applied and written to events.csv, and is recorded in
// spec.json ("live_events") so that a re-run of spec.json and a --resume after it give the same
// rows; a change no unit can take alike is refused; bad changes are refused before they are sent.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/bounded_input.h"
#include "core/errors.h"
#include "core/sha256.h"
#include "run/run_store.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/live_events.h"
#include "training/resume.h"
#include "training/runner.h"

namespace liftlab {
namespace {

nlohmann::json live_cf_json() {
    return nlohmann::json::parse(R"({
        "name": "live-test",
        "task": {"kind": "teacher-regression", "n_train": 512, "n_test": 128},
        "backbone": {"hidden": [32], "feature_dim": 16},
        "methods": [{"name": "adam", "lr": 0.001}, {"name": "cf-prox", "lambda": 100}],
        "steps": 60, "log_every": 10, "seeds": [0], "threads": 2, "save_state_seconds": 0,
        "diagnostics": {"spectrum_every": 0, "one_step_every": 0}})");
}

std::string file_text(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// metrics.csv without the wall-clock rows.
std::string untimed_rows(const std::string& dir) {
    std::istringstream in(file_text(dir + "/metrics.csv"));
    std::string line, out;
    while (std::getline(in, line))
        if (line.find(",time_s,") == std::string::npos &&
            line.find(",solve_fraction,") == std::string::npos)
            out += line + "\n";
    return out;
}

TEST(LiveEvents, AChangeSentMidRunIsAppliedRecordedAndReplayedBySpecJsonAndResume) {
    const auto spec = parse_spec(live_cf_json());
    test::TempDir out;
    auto live = std::make_shared<LiveEvents>();
    std::vector<LiveEvents::Outcome> outcomes;
    std::vector<AppliedEvent> applied;
    live->on_outcome([&](const LiveEvents::Outcome& o) { outcomes.push_back(o); });
    live->on_applied([&](const std::vector<AppliedEvent>& rows) {
        applied.insert(applied.end(), rows.begin(), rows.end());
    });
    RunOptions options;
    options.out_dir = out.file("live");
    options.live_events = live;
    bool sent = false;
    std::string started;  // spec.json's bytes before the change
    const auto run = run_experiment(spec, options, [&](const ProgressUpdate& u) {
        if (!sent && u.step >= 20) {
            started = file_text(live->run_dir() + "/spec.json");
            check_live_event(spec, {0, "cf-prox", "lambda", 10.0});
            live->submit({0, "cf-prox", "lambda", 10.0});
            sent = true;
        }
        return true;
    });
    ASSERT_EQ(run.status, RunStatus::Ok);
    ASSERT_TRUE(sent);
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_EQ(outcomes[0].error, "");
    const int at = outcomes[0].event.step;
    // Sent at step ≥ 20 of a run whose methods train on two threads between log points: taken
    // at the next log point, no later.
    EXPECT_GE(at, 20);
    EXPECT_LE(at, 40);
    EXPECT_EQ(at % 10, 0);
    ASSERT_EQ(applied.size(), 1u);
    EXPECT_EQ(applied[0].step, at);
    EXPECT_EQ(applied[0].method, "cf-prox");
    EXPECT_EQ(applied[0].old_value, 100.0);
    EXPECT_EQ(applied[0].new_value, 10.0);
    EXPECT_EQ(file_text(run.run_dir + "/events.csv"),
              "step,method,seed,key,old,new\n" + std::to_string(at) + ",cf-prox,0,lambda,100,10\n");
    // The record: spec.json lists it under live_events; its digest is the spec as started.
    const auto recorded = read_json_file(run.run_dir + "/spec.json");
    ASSERT_TRUE(recorded.contains("live_events")) << recorded.dump();
    EXPECT_EQ(recorded["live_events"],
              nlohmann::json::array({to_json(RunEvent{at, "cf-prox", "lambda", 10.0})}));
    ASSERT_FALSE(started.empty());
    EXPECT_EQ(started.find("live_events"), std::string::npos);
    EXPECT_NE(file_text(run.run_dir + "/spec.json"), started);
    EXPECT_EQ(spec_file_sha256(file_text(run.run_dir + "/spec.json")), hex_sha256(started));
    EXPECT_EQ(spec_file_sha256(started), hex_sha256(started));
    const auto replayed = parse_spec(recorded);
    ASSERT_EQ(replayed.events.size(), 1u);
    EXPECT_EQ(replayed.events[0], (RunEvent{at, "cf-prox", "lambda", 10.0}));

    // A re-run of spec.json gives every row again; without the change, the rows after it differ.
    RunOptions plain;
    plain.out_dir = out.file("again");
    const auto again = run_experiment(replayed, plain);
    EXPECT_EQ(untimed_rows(again.run_dir), untimed_rows(run.run_dir));
    EXPECT_EQ(file_text(again.run_dir + "/events.csv"), file_text(run.run_dir + "/events.csv"));
    plain.out_dir = out.file("without");
    const auto without = run_experiment(spec, plain);
    EXPECT_NE(untimed_rows(without.run_dir), untimed_rows(run.run_dir));

    // The same live change, the run stopped after it and resumed from its folder: the rows of
    // the uninterrupted run (the state saved after the change carries the started digest).
    auto live2 = std::make_shared<LiveEvents>();
    std::atomic<bool> stop{false};
    RunOptions stopping;
    stopping.out_dir = out.file("stopped");
    stopping.live_events = live2;
    stopping.stop = &stop;
    bool sent2 = false;
    const auto stopped = run_experiment(spec, stopping, [&](const ProgressUpdate& u) {
        if (!sent2 && u.step >= 20) {
            live2->submit({0, "cf-prox", "lambda", 10.0});
            sent2 = true;
        }
        const auto s = live2->scheduled();
        if (!s.empty() && u.step >= s[0].step + 10) stop = true;
        return true;
    });
    ASSERT_EQ(stopped.status, RunStatus::Cancelled);
    ASSERT_EQ(live2->scheduled().size(), 1u);
    const auto plan = prepare_resume(stopped.run_dir, resumable_spec(stopped.run_dir));
    RunOptions resume;
    resume.out_dir = out.str();
    resume.resume = plan;
    const auto resumed = run_experiment(resumable_spec(stopped.run_dir), resume);
    ASSERT_EQ(resumed.status, RunStatus::Ok);
    const int at2 = live2->scheduled()[0].step;
    // Where the change landed may differ from the first run (thread timing): compare with a
    // run of the same recorded schedule.
    auto with_at2 = spec;
    with_at2.events = {RunEvent{at2, "cf-prox", "lambda", 10.0}};
    plain.out_dir = out.file("at2");
    const auto reference = run_experiment(with_at2, plain);
    EXPECT_EQ(untimed_rows(stopped.run_dir), untimed_rows(reference.run_dir));
    EXPECT_EQ(file_text(stopped.run_dir + "/events.csv"),
              file_text(reference.run_dir + "/events.csv"));
}

// The scheduling alone, on two units stepping at different speeds on their own threads (chunks
// ending at multiples of 10 or at a scheduled event, as SeedRun's sync steps): whenever the event
// is submitted, both units apply it exactly once, at the step it was given.
TEST(LiveEvents, UnitsAtDifferentSpeedsApplyEachEventAtTheStepItWasGiven) {
    int scheduled_runs = 0;
    for (int trial = 0; trial < 40; ++trial) {
        LiveEvents live;
        int records = 0;
        live.begin_run(200, [&](const std::vector<RunEvent>&) { ++records; });
        std::vector<std::vector<int>> applied_at(2);
        const auto unit = [&](int u, int delay_us) {
            for (int step = 1; step <= 200;) {
                int last = step;
                const auto now =
                    live.at_boundary(u, step - 1, [&](const std::function<bool(int)>& event_at) {
                        for (last = step; last % 10 != 0 && last != 200 && !event_at(last);) ++last;
                        return last;
                    });
                for (const auto& e : now) applied_at[u].push_back(e.step);
                std::this_thread::sleep_for(
                    std::chrono::microseconds(delay_us * (last - step + 1)));
                step = last + 1;
            }
            live.unit_done(u);
        };
        std::thread a(unit, 0, 30), b(unit, 1, 70);
        std::this_thread::sleep_for(std::chrono::microseconds(300 + (trial * 997) % 6000));
        live.submit({0, "m", "lr", 1.0});
        a.join();
        b.join();
        live.end_run();
        const auto s = live.scheduled();
        if (s.empty()) continue;  // refused: unit 0 had finished
        ++scheduled_runs;
        ASSERT_EQ(s.size(), 1u);
        EXPECT_EQ(records, 1);
        for (int u = 0; u < 2; ++u)
            EXPECT_EQ(applied_at[u], std::vector<int>{s[0].step}) << "trial " << trial;
    }
    EXPECT_GT(scheduled_runs, 20);
}

TEST(LiveEvents, AChangeAUnitCanNoLongerTakeIsRefusedAndBadChangesNeverSent) {
    // Two seeds one after the other: once seed 0 has finished, a change could not reach it.
    auto j = live_cf_json();
    j["seeds"] = {0, 1};
    j["threads"] = 1;
    j["steps"] = 20;
    const auto spec = parse_spec(j);
    auto live = std::make_shared<LiveEvents>();
    std::vector<LiveEvents::Outcome> outcomes;
    live->on_outcome([&](const LiveEvents::Outcome& o) { outcomes.push_back(o); });
    RunOptions options;  // nothing written
    options.live_events = live;
    bool sent = false;
    const auto run = run_experiment(spec, options, [&](const ProgressUpdate& u) {
        if (!sent && u.seed_index == 1) {
            live->submit({0, "adam", "lr", 0.01});
            sent = true;
        }
        return true;
    });
    ASSERT_EQ(run.status, RunStatus::Ok);
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_NE(outcomes[0].error.find("has finished"), std::string::npos) << outcomes[0].error;
    EXPECT_TRUE(live->scheduled().empty());
    // Sent after the run: refused when the next run... ends it (end_run), never applied.
    live->submit({0, "adam", "lr", 0.01});
    live->end_run();
    ASSERT_EQ(outcomes.size(), 2u);
    EXPECT_NE(outcomes[1].error.find("ended"), std::string::npos);

    const auto refused = [&](const RunEvent& e, const std::string& words) {
        try {
            check_live_event(spec, e);
            ADD_FAILURE() << "accepted " << e.method << "." << e.key;
        } catch (const SpecError& err) {
            EXPECT_NE(std::string(err.what()).find(words), std::string::npos) << err.what();
        }
    };
    refused({0, "nope", "lr", 1}, "no method labelled 'nope'");
    refused({0, "cf-prox", "rho", 0.5}, "its live settings: lr, lambda");
    refused({0, "adam", "lr", 0}, "positive");
    refused({0, "cf-prox", "lambda", -1}, "event.value");
    refused({0, "push", "readout", 0.3}, "needs an ICNN run");
    EXPECT_NO_THROW(check_live_event(spec, {0, "cf-prox", "lambda", 3.5}));
}

}  // namespace
}  // namespace liftlab
