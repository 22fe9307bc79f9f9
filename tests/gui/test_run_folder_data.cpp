// The run folder as both front ends read it (app/feed/run_folder_data.h): the title names the
// task's target only for task kinds that have targets.
#include <gtest/gtest.h>
#include <QDir>
#include <QTemporaryDir>

#include <fstream>
#include <map>
#include <string>

#include "panel_feed.h"
#include "run_folder_data.h"
#include "sweep_panel.h"

namespace {

std::string folder_with(const QTemporaryDir& tmp, const std::string& name, const std::string& kind,
                        const std::string& target) {
    const std::string dir = tmp.filePath(QString::fromStdString(name)).toStdString();
    QDir().mkpath(QString::fromStdString(dir));
    std::ofstream(dir + "/metrics.csv") << "step,method,seed,metric,value\n"
                                        << "10,adam,0,test_loss,0.5\n";
    std::ofstream(dir + "/spec.json")
        << R"({"name": ")" << name << R"(", "task": {"kind": ")" << kind << R"(", "target": ")"
        << target << R"("}, "batch_size": 32, "steps": 100, "seeds": [0]})";
    return dir;
}

}  // namespace

TEST(RunFolderData, TitleNamesTheTargetOnlyForTaskKindsWithTargets) {
    QTemporaryDir tmp;
    ASSERT_TRUE(tmp.isValid());
    // spec.json writes task.target (its default, "gumbel") for every kind.
    const auto regression =
        liftlab::read_run_folder(folder_with(tmp, "cf-regression", "teacher-regression", "gumbel"));
    EXPECT_EQ(regression.title, "cf-regression  (batch 32, 100 steps, 1 seed)");
    const auto toy =
        liftlab::read_run_folder(folder_with(tmp, "cpflow-toy", "cpflow-toy", "2spirals"));
    EXPECT_EQ(toy.title, "cpflow-toy — 2spirals  (batch 32, 100 steps, 1 seed)");
}

// A batch-size sweep's title names the swept sizes, not the spec's base batch; a sweep over
// anything else keeps the one batch size every cell trains with.
TEST(RunFolderData, BatchSweepTitleNamesTheSweptSizes) {
    QTemporaryDir tmp;
    ASSERT_TRUE(tmp.isValid());
    const auto write = [&](const std::string& name, const std::string& sweep) {
        const std::string dir = tmp.filePath(QString::fromStdString(name)).toStdString();
        QDir().mkpath(QString::fromStdString(dir));
        std::ofstream(dir + "/metrics.csv") << "step,method,seed,metric,value\n";
        std::ofstream(dir + "/spec.json")
            << R"({"name": ")" << name << R"(", "task": {"kind": "fashion-mnist"},)"
            << R"( "batch_size": 64, "steps": 3000, "seeds": [0, 1, 2], "sweep": )" << sweep << "}";
        return dir;
    };
    EXPECT_EQ(liftlab::read_run_folder(write("cf-fmnist-batch-sweep",
                                             R"({"key": "batch_size", "values": [16, 64, 256]})"))
                  .title,
              "cf-fmnist-batch-sweep  (batch 16/64/256, 3000 steps, 3 seeds)");
    EXPECT_EQ(liftlab::read_run_folder(
                  write("cf-class-count-sweep", R"({"key": "task.classes", "values": [10, 100]})"))
                  .title,
              "cf-class-count-sweep  (batch 64, 3000 steps, 3 seeds)");
}

// ce trains on cross-entropy, every other method on the squared error of one-hot targets: their
// test_loss values are different quantities, and the curves' y label says which is which.
TEST(RunFolderData, ClassificationRunsRecordEachMethodsTrainingLoss) {
    QTemporaryDir tmp;
    ASSERT_TRUE(tmp.isValid());
    const std::string dir = tmp.filePath("fmnist").toStdString();
    QDir().mkpath(QString::fromStdString(dir));
    std::ofstream(dir + "/metrics.csv") << "step,method,seed,metric,value\n10,ce,0,test_loss,0.4\n";
    std::ofstream(dir + "/spec.json") << R"({"name": "cf-fashion-mnist",
        "task": {"kind": "fashion-mnist"}, "methods": [{"name": "ce", "label": "ce"},
        {"name": "adam", "label": "adam"}, {"name": "cf-prox", "label": "prox-100"}]})";
    const auto run = liftlab::read_run_folder(dir);
    const std::map<std::string, std::string> expected = {
        {"ce", "cross-entropy"}, {"adam", "squared error"}, {"prox-100", "squared error"}};
    EXPECT_EQ(run.training_loss, expected);
    EXPECT_TRUE(liftlab::mixedTrainingLosses(run.training_loss));
    EXPECT_EQ(liftlab::curveAxisLabel("test_loss", run.training_loss),
              "test loss (cross-entropy for ce; squared error for the others)");
    EXPECT_EQ(liftlab::curveAxisLabel("train_loss", run.training_loss),
              "train loss (cross-entropy for ce; squared error for the others)");
    EXPECT_EQ(liftlab::curveAxisLabel("test_accuracy", run.training_loss), "test accuracy");

    // One loss only (no ce), or not a classification task: the plain metric name.
    const auto squared_only =
        liftlab::classification_losses("fashion-mnist", {{"adam", "adam"}, {"cf-prox", "cf-prox"}});
    EXPECT_EQ(squared_only.size(), 2u);
    EXPECT_FALSE(liftlab::mixedTrainingLosses(squared_only));
    EXPECT_EQ(liftlab::curveAxisLabel("test_loss", squared_only), "test loss");
    EXPECT_TRUE(liftlab::classification_losses("teacher-regression", {{"adam", "adam"}}).empty());
    // Two ce-like methods against one squared-loss method: the larger group is "the others".
    const std::map<std::string, std::string> two_ce = {
        {"ce-a", "cross-entropy"}, {"ce-b", "cross-entropy"}, {"cf-prox", "squared error"}};
    EXPECT_EQ(liftlab::curveAxisLabel("test_loss", two_ce),
              "test loss (squared error for cf-prox; cross-entropy for the others)");
    // One method each: both named.
    const std::map<std::string, std::string> one_each = {{"ce", "cross-entropy"},
                                                         {"cf-prox", "squared error"}};
    EXPECT_EQ(liftlab::curveAxisLabel("test_loss", one_each),
              "test loss (cross-entropy for ce; squared error for cf-prox)");
}

// A class-count sweep records the Bayes ceiling (bayes_accuracy) beside every method's final
// metrics; the accuracy sweep figure draws it as a reference line at each swept value.
TEST(RunFolderData, SweepFigureDrawsTheRecordedCeiling) {
    QTemporaryDir tmp;
    ASSERT_TRUE(tmp.isValid());
    const std::string dir = tmp.filePath("sweep").toStdString();
    QDir().mkpath(QString::fromStdString(dir));
    std::ofstream(dir + "/metrics.csv") << "step,method,seed,metric,value\n"
                                        << "10,ce@task.output_dim=10,0,test_accuracy,0.99\n";
    std::ofstream(dir + "/spec.json") << R"({"name": "cf-class-count-sweep",
        "task": {"kind": "class-mixture"}, "methods": [{"name": "ce", "label": "ce"}],
        "sweep": {"key": "task.output_dim", "values": [10, 1000]}})";
    std::ofstream(dir + "/summary.json") << R"({"status": "ok", "runs": [
        {"method": "ce@task.output_dim=10", "seed": 0, "status": "ok", "sweep_value": 10,
         "final": {"test_accuracy": 0.99, "bayes_accuracy": 0.999}},
        {"method": "ce@task.output_dim=1000", "seed": 0, "status": "ok", "sweep_value": 1000,
         "final": {"test_accuracy": 0.77, "bayes_accuracy": 0.935}}]})";
    const auto run = liftlab::read_run_folder(dir);
    liftlab::SweepPanel panel;
    EXPECT_EQ(liftlab::feedSweep(panel, run, "test_accuracy"), 1);  // methods drawn
    EXPECT_EQ(panel.seriesCount(), 2);
    EXPECT_EQ(panel.pointCount("Bayes rule (ceiling)"), 2);
    // Not on other metrics' figures.
    liftlab::SweepPanel loss;
    liftlab::feedSweep(loss, run, "test_loss");
    EXPECT_EQ(loss.pointCount("Bayes rule (ceiling)"), 0);
}
