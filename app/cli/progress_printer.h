// Progress on the terminal: a redrawn bar on a TTY, plain lines (every 10 %) otherwise.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

#include "training/progress.h"

namespace liftlab::cli {

class ProgressPrinter {
public:
    explicit ProgressPrinter(std::FILE* out);
    void update(const ProgressUpdate& u);
    void finish();

private:
    std::FILE* out_;
    bool tty_;
    int last_decile_ = -1;
    std::chrono::steady_clock::time_point start_;
    std::string last_test_;
    std::string phase_ = "train";  // "adam 0.12 | cf-prox 0.08" at the last log point
};

}  // namespace liftlab::cli
