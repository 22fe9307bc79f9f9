#include "panel_feed.h"

#include <QVector>
#include <algorithm>
#include <cmath>

#include "ablation_panel.h"
#include "escape_panel.h"
#include "histogram_panel.h"
#include "loss_curve_panel.h"
#include "scatter_panel.h"

namespace liftlab {

namespace {

QVector<double> qvec(const std::vector<double>& v) {
    return QVector<double>(v.begin(), v.end());
}

}  // namespace

bool metricPrefersLogAxis(const std::string& metric) {
    static const char* kLinear[] = {
        "test_accuracy", "eff_rank",   "log_z",   "ess_fraction",   "shoulder_occupancy",
        "one_step_gain", "sigma2_jac", "p_value", "solve_fraction", "time_s"};
    for (const char* m : kLinear)
        if (metric == m) return false;
    return true;
}

int feedCurves(LossCurvePanel& panel, const RunFolderData& run, const std::string& metric,
               const QString& suffix) {
    auto it = run.metrics.find(metric);
    if (it == run.metrics.end()) return 0;
    int added = 0;
    for (const auto& method : run.method_order) {
        auto mit = it->second.find(method);
        if (mit == it->second.end()) continue;
        QVector<double> steps, mean, lo, hi;
        bool several = false;
        for (const auto& [step, vals] : mit->second) {
            const double m = mean_of(vals), sd = sd_of(vals);
            steps.push_back(step);
            mean.push_back(m);
            lo.push_back(m - sd);
            hi.push_back(m + sd);
            several = several || vals.size() > 1;
        }
        const QString label = QString::fromStdString(method) + suffix;
        panel.appendPoints(label, steps, mean);
        if (several) panel.setBand(label, steps, lo, hi);
        ++added;
    }
    return added;
}

int feedSpectra(const RunFolderData& run,
                const std::function<void(const QString&, int, const QVector<double>&)>& add) {
    int n = 0;
    for (const auto& [method, by_step] : run.spectra)
        for (const auto& [step, sv] : by_step) {
            add(QString::fromStdString(method), step, qvec(sv));
            ++n;
        }
    return n;
}

int feedGainScatter(ScatterPanel& panel, const RunFolderData& run) {
    auto g_it = run.metrics.find("one_step_gain");
    auto k_it = run.metrics.find("one_step_kappa");
    if (g_it == run.metrics.end() || k_it == run.metrics.end()) return 0;
    panel.setAxes("κ(Φ) of the batch features", "one-step gain (closed form / gradient)",
                  /*logX=*/true, /*logY=*/true);
    double kmin = 1e300, kmax = 0;
    int n = 0;
    for (const auto& method : run.method_order) {
        auto g = g_it->second.find(method);
        auto k = k_it->second.find(method);
        if (g == g_it->second.end() || k == k_it->second.end()) continue;
        QVector<double> xs, ys;
        for (const auto& [step, gains] : g->second) {
            auto ks = k->second.find(step);
            if (ks == k->second.end()) continue;
            for (size_t i = 0; i < std::min(gains.size(), ks->second.size()); ++i) {
                xs.push_back(ks->second[i]);
                ys.push_back(gains[i]);
                kmin = std::min(kmin, ks->second[i]);
                kmax = std::max(kmax, ks->second[i]);
            }
        }
        panel.addPoints(QString::fromStdString(method), xs, ys);
        ++n;
    }
    if (kmax > 0) {
        QVector<double> bx, by;
        for (int i = 0; i <= 50; ++i) {
            const double k = kmin * std::pow(kmax / kmin, i / 50.0);
            bx.push_back(k);
            by.push_back(k * k);
        }
        panel.setReference("bound κ² (λ → 0)", bx, by);
    }
    panel.rescale();
    return n;
}

int feedAblation(AblationPanel& panel, const RunFolderData& run, bool theta_gradient) {
    const std::string metric = theta_gradient ? "sigma2_jac_theta" : "sigma2_jac";
    const std::string pmetric = theta_gradient ? "p_value_theta" : "p_value";
    const std::string null_sd = metric + "_null_sd";
    int n = 0;
    for (const auto& [method, m] : run.finals) {
        auto it = m.find(metric);
        if (it == m.end() || it->second.empty()) continue;
        const auto slack = m.find("slack");
        if (!theta_gradient && slack != m.end() && !slack->second.empty() &&
            slack->second.front() == 0.0) {
            panel.setStructuralZero(QString::fromStdString(method), QStringLiteral("0 — no slack"));
            ++n;
            continue;
        }
        double err = sd_of(it->second);
        if (it->second.size() == 1 && m.count(null_sd)) err = m.at(null_sd).front();
        const double p = m.count(pmetric) ? median_of(m.at(pmetric)) : NAN;
        panel.setBar(QString::fromStdString(method), mean_of(it->second), err, p);
        ++n;
    }
    return n;
}

bool feedEscape(EscapePanel& panel, const RunFolderData& run) {
    bool any = false;
    // pgd has no θ̃: its traces are θ itself and its shoulder is θ = 0 exactly.
    for (const auto& [key, t] : run.traces)
        if (key.first == "pgd") {
            panel.setShoulderLabel(
                QStringLiteral("shoulder σ(θ̃) < 0.05  ·  pgd traces are θ; its "
                               "shoulder is θ = 0"));
            break;
        }
    for (const auto& [key, t] : run.traces) {
        panel.addTrace(QString::fromStdString(key.first), key.second, qvec(t.first),
                       qvec(t.second));
        any = true;
    }
    auto occ = run.metrics.find("shoulder_occupancy");
    if (occ != run.metrics.end())
        for (const auto& method : run.method_order) {
            auto mit = occ->second.find(method);
            if (mit == occ->second.end()) continue;
            QVector<double> steps, frac;
            for (const auto& [step, vals] : mit->second) {
                steps.push_back(step);
                frac.push_back(mean_of(vals));
            }
            panel.setOccupancy(QString::fromStdString(method), steps, frac);
            any = true;
        }
    for (const auto& [method, d] : run.dwells) {
        panel.setDwellTimes(QString::fromStdString(method), qvec(d));
        any = true;
    }
    for (const auto& [method, m] : run.finals) {
        if (!m.count("exit_rate")) continue;
        double exits = 0;
        if (m.count("exits"))
            for (double e : m.at("exits")) exits += e;
        panel.setEscapeStats(QString::fromStdString(method), mean_of(m.at("exit_rate")),
                             static_cast<int>(exits),
                             m.count("median_dwell") ? median_of(m.at("median_dwell")) : NAN);
        any = true;
    }
    return any;
}

int feedFinalLossHistogram(HistogramPanel& panel, const RunFolderData& run) {
    int n = 0;
    for (const auto& [method, m] : run.finals) {
        auto it = m.find("test_loss");
        if (it == m.end() || it->second.size() < 2) continue;
        panel.setSamples(QString::fromStdString(method), qvec(it->second));
        ++n;
    }
    return n;
}

}  // namespace liftlab
