#include "report.h"

#include <QString>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "ablation_panel.h"
#include "core/errors.h"
#include "escape_panel.h"
#include "histogram_panel.h"
#include "landscape_figure.h"
#include "loss_curve_panel.h"
#include "run/run_store.h"
#include "scatter_panel.h"
#include "spectrum_panel.h"
#include "summary_table.h"

namespace liftlab::cli {

namespace {

namespace fs = std::filesystem;

constexpr int kWidth = 900, kHeight = 560;

// Metrics drawn as curves over training, and whether their y axis is logarithmic.
const std::vector<std::pair<std::string, bool>> kCurveMetrics = {
    {"test_loss", true},      {"train_loss", true},  {"train_set_loss", true},
    {"test_accuracy", false}, {"test_rel_l2", true}, {"kappa", true},
    {"eff_rank", false},      {"tv", true},          {"log_z", false},
    {"ess_fraction", false}};

std::string run_title(const std::string& run_dir) {
    std::string title = fs::path(run_dir).filename().string();
    std::ifstream spec_in(run_dir + "/spec.json");
    if (!spec_in) return title;
    auto spec = nlohmann::json::parse(spec_in, nullptr, /*allow_exceptions=*/false);
    if (!spec.is_object()) return title;  // a damaged spec.json only costs the title
    const auto seeds = spec.value("seeds", nlohmann::json::array()).size();
    title = spec.value("name", title) + "  (batch " + std::to_string(spec.value("batch_size", 0)) +
            ", " + std::to_string(seeds) + " seed" + (seeds == 1 ? "" : "s") + ")";
    return title;
}

std::string write_file(const fs::path& path, const std::string& text) {
    std::ofstream out(path);
    if (!out) throw std::runtime_error("cannot write " + path.string());
    out << text;
    return path.string();
}

// Spectra of one run: method → step → σ of the first seed recorded.
std::map<std::string, std::map<int, QVector<double>>> read_spectra(const std::string& path) {
    std::map<std::string, std::map<int, QVector<double>>> out;
    std::ifstream in(path);
    if (!in) return out;
    std::string line;
    std::getline(in, line);  // header
    std::map<std::string, std::string> first_seed;
    while (std::getline(in, line)) {
        std::stringstream ss(line);
        std::string step, method, seed, index, sigma;
        if (!std::getline(ss, step, ',') || !std::getline(ss, method, ',') ||
            !std::getline(ss, seed, ',') || !std::getline(ss, index, ',') ||
            !std::getline(ss, sigma))
            continue;  // a cut-off last row
        if (!first_seed.count(method)) first_seed[method] = seed;
        if (first_seed[method] != seed) continue;
        out[method][std::stoi(step)].push_back(std::stod(sigma));
    }
    return out;
}

// Rows of a small CSV with a header line, split on commas (cut-off last rows skipped).
std::vector<std::vector<std::string>> read_csv_rows(const std::string& path, size_t columns) {
    std::vector<std::vector<std::string>> out;
    std::ifstream in(path);
    if (!in) return out;
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ',')) cells.push_back(cell);
        if (cells.size() == columns) out.push_back(std::move(cells));
    }
    return out;
}

double median_of(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Final metrics per method over seeds, in the order of summary.json: method → metric → values.
std::vector<std::pair<std::string, std::map<std::string, std::vector<double>>>> final_by_method(
    const std::string& run_dir) {
    std::vector<std::pair<std::string, std::map<std::string, std::vector<double>>>> out;
    std::ifstream in(run_dir + "/summary.json");
    if (!in) return out;
    const auto summary = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!summary.is_object() || !summary.contains("runs")) return out;
    for (const auto& r : summary["runs"]) {
        const std::string method = r.value("method", "?");
        auto it = std::find_if(out.begin(), out.end(), [&](auto& p) { return p.first == method; });
        if (it == out.end()) {
            out.push_back({method, {}});
            it = out.end() - 1;
        }
        const nlohmann::json final_metrics = r.value("final", nlohmann::json::object());
        for (const auto& [k, v] : final_metrics.items())
            if (v.is_number()) it->second[k].push_back(v.get<double>());
    }
    return out;
}

using MetricData = std::map<std::string, std::map<std::string, std::map<int, std::vector<double>>>>;

// ICNN-family figures (METHODS.md Part 2): σ²_Jac bars, escape dynamics, final-loss (basin)
// histograms over seeds, and every cached landscape.
void render_icnn_figures(const std::string& run_dir, const std::string& title,
                         const MetricData& data, const std::vector<std::string>& method_order,
                         const std::function<std::string(const std::string&)>& out_path,
                         std::vector<std::string>& written) {
    {
        std::ifstream spec_in(run_dir + "/spec.json");
        const auto spec = nlohmann::json::parse(spec_in, nullptr, /*allow_exceptions=*/false);
        const std::string kind =
            spec.is_object() && spec.contains("task") ? spec["task"].value("kind", "") : "";
        if (kind.rfind("icnn-", 0) != 0 && kind.rfind("cpflow-", 0) != 0) return;
    }
    const auto finals = final_by_method(run_dir);
    auto mean_of = [](const std::vector<double>& v) {
        double m = 0;
        for (double x : v) m += x;
        return v.empty() ? NAN : m / v.size();
    };
    auto sd_of = [&](const std::vector<double>& v) {
        if (v.size() < 2) return 0.0;
        const double m = mean_of(v);
        double s2 = 0;
        for (double x : v) s2 += (x - m) * (x - m);
        return std::sqrt(s2 / (v.size() - 1));
    };

    // σ²_Jac per architecture: bar = mean over seeds, error = the permutation null's sd (one
    // seed) or the sd over seeds, label = the median permutation p-value over seeds.
    for (const auto& [metric, pmetric, label] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"sigma2_jac", "p_value", "σ²_Jac at a fixed iterate"},
             {"sigma2_jac_emitted", "p_value_emitted", "σ²_Jac at each batch's emitted iterate"}}) {
        AblationPanel bars;
        for (const auto& [method, m] : finals) {
            auto it = m.find(metric);
            if (it == m.end() || it->second.empty()) continue;
            double err = sd_of(it->second);
            if (it->second.size() == 1 && m.count("sigma2_jac_null_sd") && metric == "sigma2_jac")
                err = m.at("sigma2_jac_null_sd").front();
            const double p = m.count(pmetric) ? median_of(m.at(pmetric)) : NAN;
            bars.setBar(QString::fromStdString(method), mean_of(it->second), err, p);
        }
        if (bars.barCount() == 0) continue;
        bars.setTitle(QString::fromStdString(title + " — " + label));
        bars.setValueLabel("σ²_Jac = tr Cov(θ̃_b, g_b)");
        if (bars.exportTo(QString::fromStdString(out_path(metric)), kWidth, kHeight))
            written.push_back(out_path(metric));
    }

    // Escape dynamics: traces (first seed), occupancy over training (mean over seeds), pooled
    // dwell times, exit statistics.
    const auto trace_rows = read_csv_rows(run_dir + "/traces.csv", 5);
    const auto dwell_rows = read_csv_rows(run_dir + "/dwells.csv", 3);
    auto occ = data.find("shoulder_occupancy");
    if (!trace_rows.empty() || !dwell_rows.empty() || occ != data.end()) {
        EscapePanel escape;
        escape.setTitle(QString::fromStdString(title + " — readout-shoulder escape"));
        std::map<std::string, std::string> first_seed;
        std::map<std::pair<std::string, int>, std::pair<QVector<double>, QVector<double>>> traces;
        for (const auto& r : trace_rows) {
            if (!first_seed.count(r[1])) first_seed[r[1]] = r[2];
            if (first_seed[r[1]] != r[2]) continue;
            auto& t = traces[{r[1], std::stoi(r[3])}];
            t.first.push_back(std::stod(r[0]));
            t.second.push_back(std::stod(r[4]));
        }
        for (const auto& [key, t] : traces)
            escape.addTrace(QString::fromStdString(key.first), key.second, t.first, t.second);
        if (occ != data.end())
            for (const auto& method : method_order) {
                auto mit = occ->second.find(method);
                if (mit == occ->second.end()) continue;
                QVector<double> steps, frac;
                for (const auto& [step, vals] : mit->second) {
                    steps.push_back(step);
                    frac.push_back(mean_of(vals));
                }
                escape.setOccupancy(QString::fromStdString(method), steps, frac);
            }
        std::map<std::string, QVector<double>> dwells;
        for (const auto& r : dwell_rows) dwells[r[0]].push_back(std::stod(r[2]));
        for (const auto& [method, d] : dwells)
            escape.setDwellTimes(QString::fromStdString(method), d);
        for (const auto& [method, m] : finals) {
            if (!m.count("exit_rate")) continue;
            double exits = 0;
            for (double e : m.at("exits")) exits += e;
            escape.setEscapeStats(QString::fromStdString(method), mean_of(m.at("exit_rate")),
                                  static_cast<int>(exits),
                                  m.count("median_dwell") ? median_of(m.at("median_dwell")) : NAN);
        }
        if (escape.exportTo(QString::fromStdString(out_path("escape")), 1200, 800))
            written.push_back(out_path("escape"));
    }

    // Final test loss over seeds ("basins"): with several seeds, where does each method end?
    {
        HistogramPanel hist;
        for (const auto& [method, m] : finals) {
            auto it = m.find("test_loss");
            if (it == m.end() || it->second.size() < 2) continue;
            hist.setSamples(QString::fromStdString(method),
                            QVector<double>(it->second.begin(), it->second.end()));
        }
        if (hist.seriesCount() > 0) {
            hist.setTitle(QString::fromStdString(title + " — final test NLL over seeds"));
            hist.setValueLabel("final test NLL (nats per sample)");
            if (hist.exportTo(QString::fromStdString(out_path("final_loss_histogram")), kWidth,
                              kHeight))
                written.push_back(out_path("final_loss_histogram"));
        }
    }

    // Landscapes already computed (liftlab-cli landscape): drawn from the cache, never computed.
    for (auto args : cached_landscapes(run_dir)) {
        args.format = fs::path(out_path("x")).extension().string().substr(1);
        try {
            const std::string f = render_landscape_figure(args);
            if (!f.empty()) written.push_back(f);
        } catch (const std::exception&) {
            // A stale cache (e.g. the run's data can no longer be rebuilt) costs only its figure.
        }
    }
}

}  // namespace

std::vector<std::string> render_report(const std::string& run_dir, const std::string& format) {
    const std::string metrics_path = run_dir + "/metrics.csv";
    if (!fs::exists(metrics_path))
        throw DataError(metrics_path, 0, "no metrics.csv here: is this a LiftLab run folder?");
    const auto rows = read_metrics_csv(metrics_path);
    const std::string title = run_title(run_dir);

    // metric → method → step → values over seeds; method order as first seen (the spec's).
    std::map<std::string, std::map<std::string, std::map<int, std::vector<double>>>> data;
    std::vector<std::string> method_order;
    for (const auto& r : rows) {
        data[r.metric][r.method][r.step].push_back(r.value);
        if (std::find(method_order.begin(), method_order.end(), r.method) == method_order.end())
            method_order.push_back(r.method);
    }

    const fs::path fig_dir = fs::path(run_dir) / "figures";
    fs::create_directories(fig_dir);
    std::vector<std::string> written;
    const std::function<std::string(const std::string&)> out_path = [&](const std::string& stem) {
        return (fig_dir / (stem + "." + format)).string();
    };

    // Curves: mean over seeds, band mean ± sd when there are several seeds.
    for (const auto& [metric, log_y] : kCurveMetrics) {
        auto it = data.find(metric);
        if (it == data.end()) continue;
        LossCurvePanel panel;
        panel.setTitle(QString::fromStdString(title));
        panel.setMetric(QString::fromStdString(metric));
        panel.setLogY(log_y);
        for (const auto& method : method_order) {
            auto mit = it->second.find(method);
            if (mit == it->second.end()) continue;
            QVector<double> steps, mean, lo, hi;
            bool several = false;
            for (const auto& [step, vals] : mit->second) {
                double m = 0;
                for (double v : vals) m += v;
                m /= vals.size();
                double var = 0;
                for (double v : vals) var += (v - m) * (v - m);
                const double sd = vals.size() > 1 ? std::sqrt(var / (vals.size() - 1)) : 0.0;
                steps.push_back(step);
                mean.push_back(m);
                lo.push_back(m - sd);
                hi.push_back(m + sd);
                several = several || vals.size() > 1;
            }
            const QString label = QString::fromStdString(method);
            panel.appendPoints(label, steps, mean);
            if (several) panel.setBand(label, steps, lo, hi);
        }
        panel.rescale();
        const std::string out = out_path(metric);
        if (!panel.exportTo(QString::fromStdString(out), kWidth, kHeight))
            throw std::runtime_error("could not write " + out);
        written.push_back(out);
    }
    if (written.empty())
        throw DataError(metrics_path, 0, "no loss metrics recorded yet (nothing to plot)");

    // Spectrum: every method at its last recorded step, and each method's history.
    const auto spectra = read_spectra(run_dir + "/spectra.csv");
    if (!spectra.empty()) {
        SpectrumPanel last;
        last.setTitle(QString::fromStdString(title) + " — features at the last step");
        last.setNormalised(true);
        for (const auto& [method, by_step] : spectra)
            for (const auto& [step, sv] : by_step)
                last.addSpectrum(QString::fromStdString(method), step, sv);
        last.showStep(-1);
        if (last.exportTo(QString::fromStdString(out_path("spectrum")), kWidth, kHeight))
            written.push_back(out_path("spectrum"));
        for (const auto& [method, by_step] : spectra) {
            SpectrumPanel history;
            history.setTitle(QString::fromStdString(method) + " — spectrum over training");
            for (const auto& [step, sv] : by_step)
                history.addSpectrum(QString::fromStdString(method), step, sv);
            history.showHistory();
            std::string stem = "spectrum_history_" + method;
            for (auto& c : stem)
                if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
            if (history.exportTo(QString::fromStdString(out_path(stem)), kWidth, kHeight))
                written.push_back(out_path(stem));
        }
    }

    // One-step gain against κ, with the classical bound gain ≤ κ² (λ → 0).
    if (data.count("one_step_gain") && data.count("one_step_kappa")) {
        ScatterPanel scatter;
        scatter.setTitle(QString::fromStdString(title));
        scatter.setAxes("κ(Φ) of the batch features", "one-step gain (closed form / gradient)",
                        /*logX=*/true, /*logY=*/true);
        double kmin = 1e300, kmax = 0;
        for (const auto& method : method_order) {
            auto g = data["one_step_gain"].find(method);
            auto k = data["one_step_kappa"].find(method);
            if (g == data["one_step_gain"].end() || k == data["one_step_kappa"].end()) continue;
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
            scatter.addPoints(QString::fromStdString(method), xs, ys);
        }
        if (kmax > 0) {
            QVector<double> bx, by;
            for (int i = 0; i <= 50; ++i) {
                const double k = kmin * std::pow(kmax / kmin, i / 50.0);
                bx.push_back(k);
                by.push_back(k * k);
            }
            scatter.setReference("bound κ² (λ → 0)", bx, by);
        }
        scatter.rescale();
        if (scatter.exportTo(QString::fromStdString(out_path("gain_vs_kappa")), kWidth, kHeight))
            written.push_back(out_path("gain_vs_kappa"));
    }

    render_icnn_figures(run_dir, title, data, method_order, out_path, written);

    // Final metrics: mean ± sd over seeds (the batch-size table of a batch sweep).
    if (fs::exists(fs::path(run_dir) / "summary.json")) {
        const auto table = read_summary_table(run_dir);
        written.push_back(write_file(fig_dir / "summary.md", to_markdown(table)));
        written.push_back(write_file(fig_dir / "summary.csv", to_csv(table)));
    }
    return written;
}

}  // namespace liftlab::cli
