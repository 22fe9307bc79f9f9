#include "report.h"

#include <QString>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>

#include "ablation_panel.h"
#include "core/errors.h"
#include "escape_panel.h"
#include "figure_catalogue.h"
#include "histogram_panel.h"
#include "landscape_figure.h"
#include "loss_curve_panel.h"
#include "panel_feed.h"
#include "plot_panel.h"
#include "run/run_store.h"
#include "run_folder_data.h"
#include "scatter_panel.h"
#include "spectrum_panel.h"
#include "summary_table.h"
#include "sweep_panel.h"

namespace liftlab::cli {

namespace {

namespace fs = std::filesystem;

constexpr int kWidth = 900, kHeight = 560;

// Metrics drawn as curves over training, when the run logged them.
const std::vector<std::string> kCurveMetrics = {
    "test_loss", "train_loss", "train_set_loss", "test_accuracy", "test_rel_l2", "kappa",
    "eff_rank",  "tv",         "log_z",          "ess_fraction"};

std::string write_file(const fs::path& path, const std::string& text) {
    write_file_atomic(path.string(), text);  // checked: a full disk is an error, not a cut table
    return path.string();
}

std::string safe_stem(std::string s) {
    for (auto& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    return s;
}

}  // namespace

std::vector<std::string> render_report(const std::string& run_dir, const std::string& format,
                                       std::vector<std::string>* notes) {
    const RunFolderData run = read_run_folder(run_dir);
    if (notes) *notes = run.notes;
    const QString title = QString::fromStdString(run.title);

    const fs::path fig_dir = fs::path(run_dir) / run_folder::kFigures;
    fs::create_directories(fig_dir);
    std::vector<std::string> written;
    auto out_path = [&](const std::string& stem) {
        return (fig_dir / (stem + "." + format)).string();
    };
    auto keep = [&](bool ok, const std::string& stem) {
        if (ok) written.push_back(out_path(stem));
    };

    // Curves: mean over seeds, band mean ± sd when there are several seeds. Named feature sets
    // (DFIV: kappa_instrument, eff_rank_treatment, …) are drawn like kappa and eff_rank.
    std::vector<std::string> curve_metrics = kCurveMetrics;
    for (const auto& m : run.metric_names())
        if (m.rfind("kappa_", 0) == 0 || m.rfind("eff_rank_", 0) == 0) curve_metrics.push_back(m);
    for (const auto& metric : curve_metrics) {
        LossCurvePanel panel;
        panel.setTitle(title);
        panel.setMetric(QString::fromStdString(metric));
        panel.setAxisLabel(QString::fromStdString(curveAxisLabel(metric, run.training_loss)));
        panel.setLogY(metricPrefersLogAxis(metric));
        if (feedCurves(panel, run, metric) == 0) continue;
        panel.rescale();
        if (!panel.exportTo(QString::fromStdString(out_path(metric)), kWidth, kHeight))
            throw std::runtime_error("could not write " + out_path(metric));
        written.push_back(out_path(metric));
    }
    // A run killed or stopped before its first log point has no curve yet: its summary table
    // (statuses) is still written below, and the caller says there was nothing to plot.

    // Spectrum: every method at its last recorded step, and each method's history.
    if (!run.spectra.empty()) {
        SpectrumPanel last;
        last.setTitle(title + " — features at the last step");
        last.setNormalised(true);
        feedSpectra(run, [&](const QString& m, int step, const QVector<double>& sv) {
            last.addSpectrum(m, step, sv);
        });
        last.showStep(-1);
        keep(last.exportTo(QString::fromStdString(out_path("spectrum")), kWidth, kHeight),
             "spectrum");
        for (const auto& [method, by_step] : run.spectra) {
            SpectrumPanel history;
            const QString label = QString::fromStdString(method);
            history.setTitle(label + " — spectrum over training");
            for (const auto& [step, sv] : by_step)
                history.addSpectrum(label, step, QVector<double>(sv.begin(), sv.end()));
            history.showHistory();
            const std::string stem = "spectrum_history_" + safe_stem(method);
            keep(history.exportTo(QString::fromStdString(out_path(stem)), kWidth, kHeight), stem);
        }
    }

    // A sweep: each final metric against the swept value, one line per method (± sd over seeds).
    for (const auto& metric : sweepMetrics(run)) {
        SweepPanel sweep;
        sweep.setTitle(title + " — final " + QString::fromStdString(metric) + " against " +
                       QString::fromStdString(run.sweep_key));
        if (feedSweep(sweep, run, metric) == 0) continue;
        const std::string stem = "sweep_" + safe_stem(metric);
        keep(sweep.exportTo(QString::fromStdString(out_path(stem)), kWidth, kHeight + 80), stem);
    }

    // One-step gain against κ, with the classical bound gain ≤ κ² (λ → 0).
    {
        ScatterPanel scatter;
        scatter.setTitle(title);
        if (feedGainScatter(scatter, run) > 0)
            keep(scatter.exportTo(QString::fromStdString(out_path("gain_vs_kappa")), kWidth,
                                  kHeight),
                 "gain_vs_kappa");
    }

    // The registered figures (app/feed/figure_catalogue.cpp).
    for (const FigureEntry& entry : figure_catalogue()) {
        const std::unique_ptr<PlotPanel> panel(entry.make(nullptr));
        const std::string stem = entry.key.toStdString();
        if (entry.fill(*panel, run))
            keep(panel->exportTo(QString::fromStdString(out_path(stem)), kWidth, kHeight), stem);
    }

    if (run.icnn()) {
        // σ²_Jac per architecture (slack-contracted; structural zeros without a slack), and the
        // separate un-contracted θ̃-gradient diagnostic at a fixed iterate.
        for (const bool theta_gradient : {false, true}) {
            AblationPanel bars;
            if (feedAblation(bars, run, theta_gradient) == 0) continue;
            bars.setTitle(title + (theta_gradient
                                       ? " — θ̃-gradient cross-covariance at a fixed iterate"
                                       : " — σ²_Jac, slack-contracted at each batch's iterate"));
            bars.setValueLabel(theta_gradient ? "tr Cov(θ̃_b, ∂ℓ_b/∂θ̃ at θ̃_ref)"
                                              : "σ²_Jac = tr Cov(θ̃_b, ∂ℓ_b/∂b)");
            const std::string stem = theta_gradient ? "sigma2_jac_theta" : "sigma2_jac";
            keep(bars.exportTo(QString::fromStdString(out_path(stem)), kWidth, kHeight), stem);
        }
        EscapePanel escape;
        escape.setTitle(title + " — readout-shoulder escape");
        if (feedEscape(escape, run))
            keep(escape.exportTo(QString::fromStdString(out_path("escape")), 1200, 800), "escape");
        HistogramPanel hist;
        if (feedFinalLossHistogram(hist, run) > 0) {
            hist.setTitle(title + " — final test NLL over seeds");
            hist.setValueLabel("final test NLL (nats per sample)");
            keep(hist.exportTo(QString::fromStdString(out_path("final_loss_histogram")), kWidth,
                               kHeight),
                 "final_loss_histogram");
        }
        // Landscapes already computed (liftlab-cli landscape): drawn from the cache only.
        for (auto args : cached_landscapes(run_dir)) {
            args.format = format;
            try {
                const std::string f = render_landscape_figure(args);
                if (!f.empty()) written.push_back(f);
            } catch (const std::exception&) {
                // A stale cache (e.g. data that can no longer be rebuilt) costs only its figure.
            }
        }
    }

    // Final metrics: mean ± sd over seeds (the batch-size table of a batch sweep).
    if (fs::exists(fs::path(run_dir) / run_folder::kSummary)) {
        const auto table = read_summary_table(run_dir);
        written.push_back(write_file(fig_dir / "summary.md", to_markdown(table)));
        written.push_back(write_file(fig_dir / "summary.csv", to_csv(table)));
    }
    return written;
}

}  // namespace liftlab::cli
