#include "progress_printer.h"

#include <unistd.h>

#include <cmath>
#include <map>

#include "core/c_numbers.h"

namespace liftlab::cli {

ProgressPrinter::ProgressPrinter(std::FILE* out)
    : out_(out), tty_(::isatty(::fileno(out))), start_(std::chrono::steady_clock::now()) {}

void ProgressPrinter::update(const ProgressUpdate& u) {
    if (u.phase == "data") {
        // Generating data (e.g. Burgers) before training: its own short progress line.
        const int decile = static_cast<int>(std::floor(u.fraction * 10 + 1e-9));
        if (tty_) {
            std::fprintf(out_, "\r\033[Kpreparing data %3s%%",
                         c_fixed(100 * u.fraction, 0).c_str());
            std::fflush(out_);
        } else if (decile != last_decile_) {
            std::fprintf(out_, "preparing data %3d%%\n", decile * 10);
            std::fflush(out_);
        }
        last_decile_ = decile;
        phase_ = u.phase;
        start_ = std::chrono::steady_clock::now();  // training's clock starts when data is ready
        return;
    }
    if (phase_ != u.phase) {
        // The first training update arrives only at the first log point: the clock already
        // runs from the last data update (or from the printer's creation without a data phase).
        phase_ = u.phase;
        last_decile_ = -1;
    }
    // The last test losses, or in a classification run the test accuracies (ce's cross-entropy
    // and the squared losses of the other methods are not comparable; their accuracies are).
    std::map<std::string, double> test, accuracy;
    for (const auto& p : u.points) {
        if (p.metric == "test_loss") test[p.method] = p.value;
        if (p.metric == "test_accuracy") accuracy[p.method] = p.value;
    }
    if (!test.empty() || !accuracy.empty()) {
        last_test_ = accuracy.empty() ? "" : "accuracy ";
        bool first = true;
        for (const auto& [m, v] : accuracy.empty() ? test : accuracy) {
            last_test_ += (first ? "" : " | ") + m + " " +
                          (accuracy.empty() ? c_general(v, 3) : c_fixed(v, 3));
            first = false;
        }
    }
    for (const auto& s : u.statuses)
        if (stopped_early(s.status))
            std::fprintf(out_, "%s%s (seed %llu) %s at step %d: %s\n", tty_ ? "\r\033[K" : "",
                         s.method.c_str(), static_cast<unsigned long long>(s.seed),
                         to_string(s.status), s.step, s.reason.c_str());

    // Where every worker is: "seed 1/3 step 1200/3000" for each seed in progress.
    std::string where;
    char buf[96];
    if (u.workers.size() > 1) {
        for (const auto& w : u.workers) {
            std::snprintf(buf, sizeof(buf), "%sseed %d/%d step %d/%d", where.empty() ? "" : " | ",
                          w.seed_index + 1, u.num_seeds, w.step, w.total_steps);
            where += buf;
        }
    } else {
        std::snprintf(buf, sizeof(buf), "seed %d/%d step %d/%d", u.seed_index + 1, u.num_seeds,
                      u.step, u.total_steps);
        where = buf;
    }

    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = u.fraction > 0 ? elapsed * (1 - u.fraction) / u.fraction : 0;
    if (tty_) {
        constexpr int kWidth = 30;
        const int filled = static_cast<int>(std::lround(u.fraction * kWidth));
        std::string bar(filled, '#');
        bar += std::string(kWidth - filled, '.');
        std::fprintf(out_, "\r\033[K[%s] %3s%%  %s  eta %ss  test %s", bar.c_str(),
                     c_fixed(100 * u.fraction, 0).c_str(), where.c_str(), c_fixed(eta, 0).c_str(),
                     last_test_.c_str());
        std::fflush(out_);
        return;
    }
    const int decile = static_cast<int>(std::floor(u.fraction * 10 + 1e-9));
    if (decile == last_decile_) return;
    last_decile_ = decile;
    std::fprintf(out_, "progress %3d%%  %s  elapsed %ss  test %s\n", decile * 10, where.c_str(),
                 c_fixed(elapsed, 1).c_str(), last_test_.c_str());
    std::fflush(out_);
}

void ProgressPrinter::finish() {
    if (tty_) std::fputs("\n", out_);
    std::fflush(out_);
}

}  // namespace liftlab::cli
