// Landscapes of a finished ICNN run (training/icnn_landscape.h): the centre of the plane is the
// final checkpoint, so its loss must equal the final test NLL the runner logged, in θ-space and in
// the lifted space alike (float32 checkpoints: 1e-4 relative); trajectories lie in their own PCA
// plane when it is spanned by them; the cache returns the same grid without recomputing; cancel
// writes nothing; bad options are named.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/icnn_landscape.h"
#include "training/runner.h"

namespace liftlab {
namespace {

namespace fs = std::filesystem;

class IcnnLandscapeTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        ExperimentSpec s;
        s.name = "landscape-test";
        s.task.kind = "icnn-ebm-1d";
        s.task.target = "gumbel";
        s.task.n_train = 2048;
        s.task.n_test = 1024;
        s.icnn.width = 12;
        s.icnn.layers = 2;
        s.icnn.quadrature_points = 1000;
        s.icnn.reference_size = 256;
        s.optimizer.lr = 3e-3;
        s.batch_size = 64;
        s.steps = 30;
        s.log_every = 30;
        s.threads = 1;
        s.diagnostics.checkpoint_every = 15;
        for (const std::string m : {"lifter", "pgd"}) {
            MethodSpec ms;
            ms.name = ms.label = m;
            s.methods.push_back(ms);
        }
        // One folder per process: ctest runs these tests as parallel processes.
        out_ = (fs::temp_directory_path() /
                ("liftlab-icnn-landscape-test-" + std::to_string(::getpid())))
                   .string();
        fs::remove_all(out_);
        RunOptions options;
        options.out_dir = out_;
        const auto result = run_experiment(s, options);
        ASSERT_EQ(result.status, "ok");
        run_dir_ = result.run_dir;
        for (const auto& r : result.runs) final_loss_[r.method] = r.final_metrics.at("test_loss");
    }
    static void TearDownTestSuite() { fs::remove_all(out_); }

    static std::string out_, run_dir_;
    static std::map<std::string, double> final_loss_;
};
std::string IcnnLandscapeTest::out_, IcnnLandscapeTest::run_dir_;
std::map<std::string, double> IcnnLandscapeTest::final_loss_;

TEST_F(IcnnLandscapeTest, CentreIsTheFinalTestLossInBothSpaces) {
    for (const std::string method : {"lifter", "pgd"}) {
        for (const std::string space : {"theta", "lifted"}) {
            RunLandscapeOptions o;
            o.space = space;
            o.method = method;
            o.grid = 3;
            o.use_cache = false;
            const auto l = run_landscape(run_dir_, o);
            const double expected = final_loss_.at(method);
            EXPECT_NEAR(l.center_loss, expected, 1e-4 * std::abs(expected))
                << method << " " << space;
            ASSERT_EQ(l.grid.loss.size(), 9u);
            // Every cell is finite on this small model (θ is clamped ≥ 0 in θ-space).
            for (double v : l.grid.loss) EXPECT_TRUE(std::isfinite(v));
        }
    }
}

TEST_F(IcnnLandscapeTest, PcaPlaneHoldsTheAnchorTrajectoryAndOthersAreProjected) {
    RunLandscapeOptions o;
    o.method = "lifter";
    o.grid = 5;
    o.directions = "pca";
    const auto l = run_landscape(run_dir_, o);
    ASSERT_EQ(l.trajectories.size(), 2u);               // lifter and pgd share θ-space
    ASSERT_EQ(l.trajectories.at("lifter").size(), 3u);  // steps 0, 15, 30
    EXPECT_EQ(l.trajectory_steps.at("lifter"), (std::vector<int64_t>{0, 15, 30}));
    // The last checkpoint is the centre: (0, 0) exactly up to rounding.
    EXPECT_NEAR(l.trajectories.at("lifter").back()[0], 0.0, 1e-9);
    EXPECT_NEAR(l.trajectories.at("lifter").back()[1], 0.0, 1e-9);
    // Three checkpoints span a 2-D affine plane: the top-2 PCA plane holds them exactly.
    EXPECT_LT(l.max_residual.at("lifter"), 1e-6);
    EXPECT_EQ(l.trajectories.at("pgd").size(), 3u);
    // The grid covers every projected point.
    for (const auto& [label, pts] : l.trajectories)
        for (const auto& p : pts) {
            EXPECT_GE(p[0], l.grid.range.alpha_min);
            EXPECT_LE(p[0], l.grid.range.alpha_max);
            EXPECT_GE(p[1], l.grid.range.beta_min);
            EXPECT_LE(p[1], l.grid.range.beta_max);
        }
    // The lifted space holds the anchor's trajectory alone.
    o.space = "lifted";
    const auto lifted = run_landscape(run_dir_, o);
    EXPECT_EQ(lifted.trajectories.size(), 1u);
    EXPECT_GT(lifted.parameters, l.parameters);  // the lifter's body is larger than θ
}

// A trajectory file is appended at each log point; one whose last record is cut (a run killed
// while appending, or read while it appends) is drawn from its complete checkpoints and says so.
TEST_F(IcnnLandscapeTest, ATrajectoryWithACutLastRecordIsDrawnFromItsCompleteCheckpoints) {
    liftlab::test::TempDir tmp;
    const std::string copy = tmp.str() + "/run";
    fs::copy(run_dir_, copy, fs::copy_options::recursive);
    fs::remove_all(copy + "/landscapes");
    const std::string file = copy + "/trajectories/lifter_seed0.pt";
    {
        // The start of a next record: its length line and 17 of its 4 000 bytes.
        std::ofstream f(file, std::ios::binary | std::ios::app);
        f << "4000\nLIFTLAB-STATE 1\n";
    }
    RunLandscapeOptions o;
    o.method = "lifter";
    o.grid = 3;
    o.use_cache = false;
    const auto l = run_landscape(copy, o);
    EXPECT_EQ(l.trajectory_steps.at("lifter"), (std::vector<int64_t>{0, 15, 30}));
    ASSERT_EQ(l.cut_trajectories.size(), 1u);
    EXPECT_EQ(l.cut_trajectories.at("lifter"), file);
    EXPECT_EQ(l.trajectory_steps.at("pgd"), (std::vector<int64_t>{0, 15, 30}));
    EXPECT_NEAR(l.trajectories.at("lifter").back()[0], 0.0, 1e-9);  // the last whole one
    EXPECT_NEAR(l.trajectories.at("lifter").back()[1], 0.0, 1e-9);
}

TEST_F(IcnnLandscapeTest, CacheReturnsTheSameGridAndCancelWritesNothing) {
    RunLandscapeOptions o;
    o.method = "pgd";
    o.grid = 4;
    o.directions = "random";
    o.direction_seed = 3;
    int calls = 0;
    // Cancel after the first batch: LandscapeCancelled, no cache file.
    o.cells_per_batch = 4;
    EXPECT_THROW(run_landscape(run_dir_, o, [&](double) { return ++calls < 2; }),
                 LandscapeCancelled);
    EXPECT_EQ(calls, 2);
    const auto first = run_landscape(run_dir_, o);
    EXPECT_FALSE(first.from_cache);
    EXPECT_TRUE(fs::exists(first.cache_path));
    const auto second = run_landscape(run_dir_, o);
    EXPECT_TRUE(second.from_cache);
    EXPECT_EQ(second.grid.loss, first.grid.loss);
    // A different direction seed is a different plane: recomputed.
    o.direction_seed = 4;
    EXPECT_FALSE(run_landscape(run_dir_, o).from_cache);
}

TEST_F(IcnnLandscapeTest, CellsSplitAcrossWorkersGiveTheSameGridBitForBit) {
    // Each worker has its own model copy and one thread, so the worker count cannot change a cell.
    for (const std::string space : {"theta", "lifted"}) {
        RunLandscapeOptions o;
        o.space = space;
        o.method = "lifter";
        o.grid = 5;
        o.cells_per_batch = 7;  // batches that do not divide evenly between workers
        o.use_cache = false;
        o.workers = 1;
        const int threads = torch::get_num_threads();
        torch::set_num_threads(1);  // one worker, one thread: the reference
        const auto one = run_landscape(run_dir_, o);
        torch::set_num_threads(threads);
        o.workers = 3;
        const auto three = run_landscape(run_dir_, o);
        ASSERT_EQ(one.grid.loss.size(), 25u) << space;
        EXPECT_EQ(one.grid.loss, three.grid.loss) << space;
        EXPECT_EQ(torch::get_num_threads(), threads) << "the caller's thread count is restored";
    }
}

TEST_F(IcnnLandscapeTest, BadOptionsAreNamed) {
    RunLandscapeOptions o;
    o.space = "phi";
    EXPECT_THROW(run_landscape(run_dir_, o), std::invalid_argument);
    o = {};
    o.directions = "eigen";
    EXPECT_THROW(run_landscape(run_dir_, o), std::invalid_argument);
    o = {};
    o.method = "adam";
    EXPECT_THROW(run_landscape(run_dir_, o), std::invalid_argument);
    o = {};
    o.seed = 9;
    EXPECT_THROW(run_landscape(run_dir_, o), std::invalid_argument);
    EXPECT_THROW(run_landscape(out_ + "/nowhere", {}), DataError);
}

}  // namespace
}  // namespace liftlab
