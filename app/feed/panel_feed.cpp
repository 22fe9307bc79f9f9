#include "panel_feed.h"

#include <QStringList>
#include <QVector>
#include <algorithm>
#include <cmath>
#include <set>

#include "ablation_panel.h"
#include "escape_panel.h"
#include "histogram_panel.h"
#include "loss_curve_panel.h"
#include "methods/method_registry.h"
#include "scatter_panel.h"
#include "sweep_panel.h"

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
    // Named feature sets (DFIV): eff_rank_instrument reads like eff_rank.
    if (metric.rfind("eff_rank_", 0) == 0) return false;
    return true;
}

bool mixedTrainingLosses(const std::map<std::string, std::string>& losses) {
    std::set<std::string> kinds;
    for (const auto& [label, loss] : losses) kinds.insert(loss);
    return kinds.size() > 1;
}

std::string curveAxisLabel(const std::string& metric,
                           const std::map<std::string, std::string>& losses) {
    std::string label = metric;
    std::replace(label.begin(), label.end(), '_', ' ');
    if ((metric != "test_loss" && metric != "train_loss") || !mixedTrainingLosses(losses))
        return label;
    // Each loss with its methods; a loss with more methods than any other (and at least two)
    // is "the others".
    std::map<std::string, std::vector<std::string>> by_loss;
    for (const auto& [method, loss] : losses) by_loss[loss].push_back(method);
    auto most = by_loss.end();
    size_t largest = 1, ties = 0;
    for (auto it = by_loss.begin(); it != by_loss.end(); ++it) {
        if (it->second.size() > largest) {
            largest = it->second.size();
            most = it;
            ties = 0;
        } else if (it->second.size() == largest) {
            ++ties;
        }
    }
    if (ties > 0) most = by_loss.end();
    std::string parts;
    for (const auto& [loss, methods] : by_loss) {
        if (most != by_loss.end() && loss == most->first) continue;
        std::string names;
        for (const auto& m : methods) names += (names.empty() ? "" : ", ") + m;
        parts += (parts.empty() ? "" : "; ") + loss + " for " + names;
    }
    if (most != by_loss.end()) parts += "; " + most->first + " for the others";
    return label + " (" + parts + ")";
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

namespace {

std::string sweepAxisLabel(const std::string& key) {
    if (key == "batch_size") return "batch size (samples per step)";
    const auto dot = key.rfind('.');
    const std::string last = dot == std::string::npos ? key : key.substr(dot + 1);
    if (key.rfind("methods.", 0) == 0 && (last == "lambda" || last == "beta")) {
        const std::string method = key.substr(8, dot - 8);
        return (last == "lambda" ? "λ" : "β") + std::string(" of ") + method + " (on batch sums)";
    }
    return key;
}

std::string metricAxisLabel(const std::string& metric) {
    if (metric == "test_accuracy") return "final test accuracy";
    if (metric == "test_rel_l2") return "final test relative L2";
    if (metric == "test_loss") return "final test loss";
    if (metric == "train_set_loss") return "final loss on the whole training set";
    if (metric.rfind("eff_rank", 0) == 0) {
        const std::string features = metric.size() > 8 ? metric.substr(9) : "";
        return "final effective rank of the " + (features.empty() ? "" : features + " ") +
               "features";
    }
    return "final " + metric;
}

std::string number(double v) {
    QString s = QString::number(v, 'g', 3);
    return s.toStdString();
}

// A caption line longer than this is wrapped (QCPTextElement sizes itself to its longest line).
constexpr int kCaptionColumns = 110;

// Greedy word wrap of every paragraph of `text` at `columns` characters (UTF-8 counted per code
// point).
std::string wrapLines(const std::string& text, int columns) {
    const QStringList paragraphs = QString::fromStdString(text).split(QLatin1Char('\n'));
    QStringList out;
    for (const QString& p : paragraphs) {
        QString line;
        for (const QString& word : p.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            if (!line.isEmpty() && line.size() + 1 + word.size() > columns) {
                out << line;
                line.clear();
            }
            line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
        }
        out << line;
    }
    return out.join(QLatin1Char('\n')).toStdString();
}

// What a point is, and how λ/β (on batch sums) compare with the θ step's mean loss.
std::string sweepCaption(const RunFolderData& run) {
    int seeds = 0;
    for (const auto& [method, by_value] : run.sweep)
        for (const auto& [value, finals] : by_value)
            for (const auto& [metric, values] : finals)
                seeds = std::max(seeds, static_cast<int>(values.size()));
    std::string c = "Each point: the value after " + std::to_string(run.steps) +
                    " steps, mean ± sd over " + std::to_string(seeds) +
                    " seed(s); diverged runs are left out (summary.md counts them).";
    const int k = std::max(1, run.output_dim), r = std::max(1, run.rows_per_sample);
    const std::string rows =
        r > 1 ? "B·" + std::to_string(r) + " rows (every grid point)" : "B rows";
    if (run.sweep_key == "batch_size") {
        c += "\nλ and β weigh batch sums (n = " + rows + ", k = " + std::to_string(k) +
             " outputs); against the θ step's mean loss they act as λ/(n·k), so a fixed λ pulls "
             "harder at small batches.";
    } else {
        const auto dot = run.sweep_key.rfind('.');
        const std::string last =
            dot == std::string::npos ? run.sweep_key : run.sweep_key.substr(dot + 1);
        if (last == "lambda" || last == "beta") {
            const double n = static_cast<double>(run.batch_size) * r * k;
            const std::string sym = last == "lambda" ? "λ" : "β";
            c +=
                "\n" + sym +
                " multiplies the penalty against the batch SUM of squared errors over n = " + rows +
                " and k = " + std::to_string(k) + " outputs; the θ step's mean loss sees " + sym +
                "/(n·k) = " + sym + "/" + number(n) + " here (batch " +
                std::to_string(run.batch_size) + "). Change the batch size and rescale " + sym +
                " with it.";
        }
    }
    return wrapLines(c, kCaptionColumns);
}

}  // namespace

std::vector<std::string> sweepMetrics(const RunFolderData& run) {
    std::vector<std::string> out;
    std::set<std::string> present;
    for (const auto& [method, by_value] : run.sweep)
        for (const auto& [value, finals] : by_value)
            for (const auto& [metric, values] : finals) present.insert(metric);
    for (const char* m : {"test_accuracy", "test_rel_l2", "test_loss"})
        if (present.count(m)) {
            out.push_back(m);
            break;
        }
    if (present.count("train_set_loss")) out.push_back("train_set_loss");  // cf-width's claim
    for (const auto& m : present)
        if (m.rfind("eff_rank", 0) == 0) out.push_back(m);
    return out;
}

int feedSweep(SweepPanel& panel, const RunFolderData& run, const std::string& metric) {
    if (run.sweep.empty()) return 0;
    double lo = INFINITY, hi = 0;
    for (const auto& [method, by_value] : run.sweep)
        for (const auto& [value, finals] : by_value) {
            lo = std::min(lo, value);
            hi = std::max(hi, value);
        }
    // Batch sizes and λ span decades: a log x axis once the values do (and all are positive).
    const bool logX = lo > 0 && hi / lo >= 8;
    panel.setAxes(QString::fromStdString(sweepAxisLabel(run.sweep_key)),
                  QString::fromStdString(metricAxisLabel(metric)), logX,
                  metricPrefersLogAxis(metric));
    int n = 0;
    for (const auto& [method, by_value] : run.sweep) {
        QVector<double> x, mean, sd;
        for (const auto& [value, finals] : by_value) {
            auto it = finals.find(metric);
            if (it == finals.end() || it->second.empty()) continue;
            x.push_back(value);
            mean.push_back(mean_of(it->second));
            sd.push_back(sd_of(it->second));
        }
        if (x.isEmpty()) continue;
        panel.addLine(QString::fromStdString(method), x, mean, sd);
        ++n;
    }
    // The problem's ceiling where the run recorded one (class-mixture: the Bayes rule's test
    // accuracy, the same for every method at a sweep value).
    if (metric == "test_accuracy" && n > 0) {
        std::map<double, double> ceiling;
        for (const auto& [method, by_value] : run.sweep)
            for (const auto& [value, finals] : by_value)
                if (auto it = finals.find("bayes_accuracy");
                    it != finals.end() && !it->second.empty())
                    ceiling.emplace(value, it->second.front());
        if (!ceiling.empty()) {
            QVector<double> x, y;
            for (const auto& [value, acc] : ceiling) {
                x.push_back(value);
                y.push_back(acc);
            }
            panel.addReferenceLine(QStringLiteral("Bayes rule (ceiling)"), x, y);
        }
    }
    panel.setCaption(n > 0 ? QString::fromStdString(sweepCaption(run)) : QString());
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
        if (const auto* m = find_method(key.first);
            m && m->positivity == PositivityMap::Projected) {
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
