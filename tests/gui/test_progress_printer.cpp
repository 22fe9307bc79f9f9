// liftlab-cli's progress lines on a non-terminal (app/cli/progress_printer.*): one line per 10 %,
// the elapsed time of the training phase, the last test losses.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "core/c_numbers.h"
#include "progress_printer.h"

namespace {

std::string contents(std::FILE* f) {
    std::fflush(f);
    std::rewind(f);
    std::string out;
    char buf[256];
    while (std::fgets(buf, sizeof(buf), f)) out += buf;
    return out;
}

liftlab::ProgressUpdate train_update(int step, int total, double test_loss) {
    liftlab::ProgressUpdate u;
    u.step = step;
    u.total_steps = total;
    u.fraction = static_cast<double>(step) / total;
    u.points.push_back({step, "lifter", 0, "test_loss", test_loss});
    return u;
}

double elapsed_on_line(const std::string& text, const std::string& line_start) {
    const auto at = text.find(line_start);
    if (at == std::string::npos) return -1;
    const auto e = text.find("elapsed ", at);
    if (e == std::string::npos) return -1;
    // "elapsed 0.6s": C rules whatever the locale (the printer's; std::stod would follow it).
    const auto s = text.find('s', e + 8);
    double v = -1;
    return liftlab::c_parse_double(text.substr(e + 8, s - (e + 8)), &v) ? v : -1;
}

}  // namespace

TEST(ProgressPrinter, ElapsedCountsTrainingFromTheEndOfDataPreparation) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    liftlab::cli::ProgressPrinter printer(f);
    for (double fr : {0.0, 0.5, 1.0}) {
        liftlab::ProgressUpdate d;
        d.phase = "data";
        d.fraction = fr;
        printer.update(d);
    }
    // Training (and its set-up) takes a while before the first log point reports.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    printer.update(train_update(50, 3000, 30.6));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    printer.update(train_update(300, 3000, 20.1));
    printer.finish();
    const std::string out = contents(f);
    std::fclose(f);
    EXPECT_NE(out.find("preparing data 100%"), std::string::npos) << out;
    // The first training line counts the time since the data was ready, not 0.
    const double first = elapsed_on_line(out, "progress   0%");
    const double second = elapsed_on_line(out, "progress  10%");
    EXPECT_GE(first, 0.25) << out;
    EXPECT_GE(second, first + 0.25) << out;
    EXPECT_NE(out.find("test lifter 20.1"), std::string::npos) << out;
}

// A classification run logs test_accuracy beside test_loss: the line shows the accuracies, which
// compare ce with the squared-loss methods (their test_loss values are different losses).
TEST(ProgressPrinter, ClassificationRunsShowTestAccuracy) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    liftlab::cli::ProgressPrinter printer(f);
    liftlab::ProgressUpdate u = train_update(300, 3000, 0.35);
    u.points.push_back({300, "lifter", 0, "test_accuracy", 0.8714});
    u.points.push_back({300, "ce", 0, "test_loss", 0.41});
    u.points.push_back({300, "ce", 0, "test_accuracy", 0.8536});
    printer.update(u);
    printer.finish();
    const std::string out = contents(f);
    std::fclose(f);
    EXPECT_NE(out.find("test accuracy ce 0.854 | lifter 0.871"), std::string::npos) << out;
    EXPECT_EQ(out.find("0.35"), std::string::npos) << out;
}
