#include "figure_catalogue.h"

#include <QObject>
#include <cmath>

#include "timing_panel.h"

namespace liftlab {

namespace {

// Milliseconds per step and the closed-form share, from the cumulative time_s (and
// solve_fraction) each method logged last: mean and sd over seeds.
bool fillTiming(TimingPanel& panel, const RunFolderData& run) {
    const auto time_it = run.metrics.find("time_s");
    if (time_it == run.metrics.end()) return false;
    const auto solve_it = run.metrics.find("solve_fraction");
    panel.setTitle(QString::fromStdString(run.title) + QObject::tr(" — cost per step"));
    for (const auto& method : run.method_order) {
        const auto m = time_it->second.find(method);
        if (m == time_it->second.end() || m->second.empty()) continue;
        const auto& [step, seconds] = *m->second.rbegin();
        if (step <= 0) continue;
        std::vector<double> ms;
        for (double s : seconds) ms.push_back(1000.0 * s / step);
        double fraction = NAN;
        if (solve_it != run.metrics.end())
            if (const auto s = solve_it->second.find(method); s != solve_it->second.end())
                if (const auto at = s->second.find(step); at != s->second.end())
                    fraction = mean_of(at->second);
        panel.setCost(QString::fromStdString(method), mean_of(ms), sd_of(ms), fraction);
    }
    return panel.barCount() > 0;
}

}  // namespace

const std::vector<FigureEntry>& figure_catalogue() {
    static const std::vector<FigureEntry> entries = {
        figure<TimingPanel>(QStringLiteral("timing"), QObject::tr("Cost"),
                            QObject::tr("Milliseconds per training step per method, split into "
                                        "the closed-form solve and the gradient step"),
                            fillTiming),
    };
    return entries;
}

}  // namespace liftlab
