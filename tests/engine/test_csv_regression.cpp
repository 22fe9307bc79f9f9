// CSV loader for users' tabular data, on small generated files; bad files name file and line.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "data/csv_table.h"
#include "data/dataset.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"

using liftlab::DataError;
using liftlab::test::TempDir;

namespace {

// Returns the DataError message for loading `content` as a CSV regression table.
std::string csv_error(const TempDir& dir, const std::string& content, int* line = nullptr) {
    const auto path = dir.write("bad.csv", content);
    try {
        liftlab::read_csv_table(path);
    } catch (const DataError& e) {
        if (line) *line = e.line();
        EXPECT_EQ(e.file(), path);
        return e.what();
    }
    ADD_FAILURE() << "expected a DataError";
    return {};
}

}  // namespace

TEST(CsvRegression, LoadsSplitsAndStandardises) {
    TempDir dir;
    std::string text = "a,b,target\n";
    for (int i = 0; i < 100; ++i)
        text += std::to_string(i) + "," + std::to_string(2 * i % 7) + "," +
                std::to_string(3.0 * i + 1) + "\n";
    liftlab::TaskSpec task;
    task.kind = "csv-regression";
    task.csv_path = dir.write("data.csv", text);
    task.test_fraction = 0.25;
    auto d = liftlab::make_dataset(task);
    EXPECT_EQ(d.n_train(), 75);
    EXPECT_EQ(d.x_test.size(0), 25);
    EXPECT_EQ(d.input_dim(), 2);
    EXPECT_EQ(d.output_dim(), 1);
    EXPECT_EQ(d.target_names, std::vector<std::string>{"target"});
    // z-scored with the training split's own statistics: mean 0, sd 1 there.
    EXPECT_NEAR(d.x_train.mean(0).abs().max().item<double>(), 0.0, 1e-5);
    EXPECT_NEAR(d.y_train.std(0).item<double>(), 1.0, 1e-5);
    // The affine relation target = 3a + 1 survives standardisation: corr(a, target) = 1.
    auto a = d.x_train.select(1, 0), y = d.y_train.select(1, 0);
    EXPECT_NEAR((a * y).mean().item<double>() * 75.0 / 74.0, 1.0, 1e-4);

    task.target_columns = {"a", "target"};
    auto d2 = liftlab::make_dataset(task);
    EXPECT_EQ(d2.input_dim(), 1);
    EXPECT_EQ(d2.output_dim(), 2);
}

TEST(CsvRegression, MissingFileIsNamed) {
    liftlab::TaskSpec task;
    task.kind = "csv-regression";
    task.csv_path = "/nonexistent/dir/data.csv";
    try {
        liftlab::make_dataset(task);
        FAIL();
    } catch (const DataError& e) {
        EXPECT_EQ(e.file(), task.csv_path);
        EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
    }
}

TEST(CsvRegression, NaNIsNamedWithLineAndColumn) {
    TempDir dir;
    int line = 0;
    auto msg = csv_error(dir, "x,y\n1,2\n3,nan\n5,6\n", &line);
    EXPECT_EQ(line, 3);
    EXPECT_NE(msg.find("column 'y'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not finite"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bad.csv:3"), std::string::npos) << msg;
}

TEST(CsvRegression, RaggedRowIsNamedWithLine) {
    TempDir dir;
    int line = 0;
    auto msg = csv_error(dir, "x,y,z\n1,2,3\n4,5\n", &line);
    EXPECT_EQ(line, 3);
    EXPECT_NE(msg.find("2 fields, the header has 3"), std::string::npos) << msg;
}

TEST(CsvRegression, NonNumberAndEmptyFilesAreErrors) {
    TempDir dir;
    EXPECT_NE(csv_error(dir, "x,y\n1,abc\n").find("'abc' is not a decimal number"),
              std::string::npos);
    // strtod would read C's hexadecimal forms; a data file means decimal.
    EXPECT_NE(csv_error(dir, "x,y\n1,0x1F\n").find("'0x1F' is not a decimal number"),
              std::string::npos);
    EXPECT_NE(csv_error(dir, "x,y\n0x1p3,2\n").find("'0x1p3' is not a decimal number"),
              std::string::npos);
    EXPECT_NE(csv_error(dir, "").find("empty"), std::string::npos);
    EXPECT_NE(csv_error(dir, "x,y\n").find("no data rows"), std::string::npos);
}

TEST(CsvRegression, UnknownTargetColumnIsNamed) {
    TempDir dir;
    liftlab::TaskSpec task;
    task.kind = "csv-regression";
    task.csv_path = dir.write("d.csv", "a,b\n1,2\n3,4\n5,6\n7,8\n");
    task.target_columns = {"c"};
    try {
        liftlab::make_dataset(task);
        FAIL();
    } catch (const DataError& e) {
        EXPECT_NE(std::string(e.what()).find("no column named 'c'"), std::string::npos);
    }
}
