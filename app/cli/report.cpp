#include "report.h"

#include <QString>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/errors.h"
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
    {"test_loss", true},   {"train_loss", true}, {"train_set_loss", true}, {"test_accuracy", false},
    {"test_rel_l2", true}, {"kappa", true},      {"eff_rank", false}};

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
    auto out_path = [&](const std::string& stem) {
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

    // Final metrics: mean ± sd over seeds (the batch-size table of a batch sweep).
    if (fs::exists(fs::path(run_dir) / "summary.json")) {
        const auto table = read_summary_table(run_dir);
        written.push_back(write_file(fig_dir / "summary.md", to_markdown(table)));
        written.push_back(write_file(fig_dir / "summary.csv", to_csv(table)));
    }
    return written;
}

}  // namespace liftlab::cli
