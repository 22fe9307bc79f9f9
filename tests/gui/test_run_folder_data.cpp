// The run folder as both front ends read it (app/feed/run_folder_data.h): the title names the
// task's target only for task kinds that have targets.
#include <gtest/gtest.h>
#include <QDir>
#include <QTemporaryDir>

#include <fstream>
#include <string>

#include "run_folder_data.h"

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
