// The run store survives a writer killed mid-run: metrics.csv stays readable up to the last
// full row, and JSON files are either old or new, never half-written.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/errors.h"
#include "run/run_store.h"
#include "test_helpers.h"

using liftlab::MetricPoint;

TEST(RunStore, KilledWriterLeavesReadableMetrics) {
    liftlab::test::TempDir dir;
    const std::string run_dir = dir.file("run");
    std::filesystem::create_directories(run_dir);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // The writer: appends rows as fast as it can until killed. No gtest, no torch here.
        liftlab::RunStore store(run_dir);
        for (int step = 0;; ++step) {
            std::vector<MetricPoint> pts;
            for (const char* m : {"adam", "cf-prox"})
                pts.push_back({step, m, 0, "test_loss", 1.0 / (1 + step)});
            store.append_metrics(pts);
            store.write_json("summary.json", {{"status", "running"}, {"step", step}});
        }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));

    const auto rows = liftlab::read_metrics_csv(run_dir + "/metrics.csv");
    ASSERT_GT(rows.size(), 10u);
    for (size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].step, static_cast<int>(i / 2));
        EXPECT_DOUBLE_EQ(rows[i].value, 1.0 / (1 + rows[i].step));
    }
    // summary.json is a complete JSON document (atomic replace).
    auto summary = nlohmann::json::parse(std::ifstream(run_dir + "/summary.json"));
    EXPECT_EQ(summary["status"], "running");
}

TEST(RunStore, TruncatedLastRowIsIgnoredAndBadRowIsNamed) {
    liftlab::test::TempDir dir;
    const auto ok =
        dir.write("m.csv", "step,method,seed,metric,value\n1,a,0,test_loss,0.5\n2,a,0,te");
    EXPECT_EQ(liftlab::read_metrics_csv(ok).size(), 1u);
    const auto bad = dir.write("b.csv", "step,method,seed,metric,value\n1,a,0,test_loss\n");
    try {
        liftlab::read_metrics_csv(bad);
        FAIL();
    } catch (const liftlab::DataError& e) {
        EXPECT_EQ(e.line(), 2);
    }
}

TEST(RunStore, CreateMakesUniqueFolders) {
    liftlab::test::TempDir dir;
    auto a = liftlab::RunStore::create(dir.str(), "x");
    auto b = liftlab::RunStore::create(dir.str(), "x");
    EXPECT_NE(a.dir(), b.dir());
}
