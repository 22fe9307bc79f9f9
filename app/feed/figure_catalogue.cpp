#include "figure_catalogue.h"

#include <QObject>
#include <cmath>

#include "claims_panel.h"
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

// A claims folder's table (liftlab-cli claims).
bool fillClaims(ClaimsPanel& panel, const RunFolderData& run) {
    if (!run.claims_folder) return false;
    QVector<ClaimsPanel::Row> rows;
    auto q = [](const std::string& s) { return QString::fromStdString(s); };
    for (const auto& c : run.claims)
        rows.push_back({q(c.id), q(c.claim), q(c.paper), q(c.ours), q(c.seeds), q(c.test),
                        q(c.verdict), q(c.needed), q(c.tier), q(c.tuned_verdict), c.p});
    panel.setTitle(QString::fromStdString(run.title));
    panel.setRows(rows,
                  QObject::tr("No claim of this check has finished yet: its sub-runs are in "
                              "the folder's runs/, and the table fills in as each claim ends"));
    return true;
}

}  // namespace

const std::vector<FigureEntry>& figure_catalogue() {
    static const std::vector<FigureEntry> entries = {
        figure<TimingPanel>(QStringLiteral("timing"), QObject::tr("Cost"),
                            QObject::tr("Milliseconds per training step per method, split into "
                                        "the closed-form solve and the gradient step"),
                            fillTiming),
        figure<ClaimsPanel>(QStringLiteral("claims"), QObject::tr("Claims"),
                            QObject::tr("The claims table of a liftlab-cli claims folder: each "
                                        "claim's test, p-value and verdict"),
                            fillClaims),
    };
    return entries;
}

}  // namespace liftlab
