#include "landscape_figure.h"

#include "core/error_text.h"
#include "training/icnn_landscape.h"

#include <QString>
#include <QVector>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <regex>

#include "core/activity.h"
#include "core/c_numbers.h"
#include "interrupt.h"
#include "landscape_panel.h"
#include "run/run_store.h"

namespace liftlab::cli {

namespace {

namespace fs = std::filesystem;

QString axis_name(const std::string& kind, int axis) {
    if (kind == "random") return QString("random direction %1 (filter-normalised)").arg(axis);
    if (kind == "delta-pca")
        return axis == 1 ? QString("δ: first → last checkpoint") : QString("PCA ⟂ δ");
    return QString("trajectory PCA %1").arg(axis);
}

std::string safe(std::string s) {
    for (auto& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    return s;
}

}  // namespace

std::string render_landscape_figure(const LandscapeFigureArgs& args,
                                    const std::function<bool(double)>& progress,
                                    std::vector<RunLandscape>* results) {
    if (args.space != "theta" && args.space != "lifted" && args.space != "both")
        throw std::invalid_argument("--space must be theta, lifted or both");
    std::vector<std::string> spaces;
    if (args.space != "lifted") spaces.push_back("theta");
    if (args.space != "theta") spaces.push_back("lifted");

    LandscapePanel panel;
    std::string method, kind;
    uint64_t seed = 0;
    int drawn = 0;
    for (size_t i = 0; i < spaces.size(); ++i) {
        RunLandscapeOptions o;
        o.space = spaces[i];
        o.directions = args.directions;
        o.method = args.method;
        o.seed = args.seed;
        o.grid = spaces[i] == "theta" ? args.grid_theta : args.grid_lifted;
        if (o.grid == 0) o.grid = args.grid;
        o.direction_seed = args.direction_seed;
        o.cache_only = args.cached_only;
        // Progress of both spaces on one scale.
        LandscapeProgress p;
        if (progress)
            p = [&, i](double f) { return progress((i + f) / static_cast<double>(spaces.size())); };
        const RunLandscape l = run_landscape(args.run_dir, o, p);
        if (results) results->push_back(l);
        method = l.method;
        kind = l.kind;
        seed = l.seed;
        const auto side = o.space == "theta" ? LandscapePanel::Theta : LandscapePanel::Lifted;
        if (l.grid.n_alpha == 0) {
            panel.setSideVisible(side, false);
            continue;
        }
        ++drawn;
        const auto& r = l.grid.range;
        panel.setGrid(side, l.grid.n_alpha, l.grid.n_beta, r.alpha_min, r.alpha_max, r.beta_min,
                      r.beta_max, QVector<double>(l.grid.loss.begin(), l.grid.loss.end()));
        panel.setSideTitle(
            side, QString::fromStdString((o.space == "theta"
                                              ? "θ-space (ICNN weights: θ, then the free tensors)"
                                              : "lifted space of " + l.method) +
                                         ", " + std::to_string(l.parameters) + " parameters"));
        for (const auto& [label, pts] : l.trajectories) {
            QVector<double> steps, a, b;
            const auto& st = l.trajectory_steps.at(label);
            for (size_t k = 0; k < pts.size(); ++k) {
                steps.push_back(static_cast<double>(k < st.size() ? st[k] : k));
                a.push_back(pts[k][0]);
                b.push_back(pts[k][1]);
            }
            panel.addTrajectory(side, QString::fromStdString(label), steps, a, b);
        }
    }
    if (drawn == 0) return "";
    for (const auto s : {LandscapePanel::Theta, LandscapePanel::Lifted})
        if (!panel.hasGrid(s)) panel.setSideVisible(s, false);
    panel.setAxisLabels(axis_name(kind, 1), axis_name(kind, 2));
    panel.setTitle(QString::fromStdString("test NLL around the final " + method + " (seed " +
                                          std::to_string(seed) + "), " + kind + " plane"));
    const fs::path dir = fs::path(args.run_dir) / "figures";
    fs::create_directories(dir);
    const std::string out = (dir / ("landscape_" + kind + "_" + safe(method) + "_seed" +
                                    std::to_string(seed) + "." + args.format))
                                .string();
    const int width = drawn == 2 ? 1400 : 760;
    if (!panel.exportTo(QString::fromStdString(out), width, 620))
        throw std::runtime_error("could not write " + out);
    return out;
}

std::vector<LandscapeFigureArgs> cached_landscapes(const std::string& run_dir) {
    std::vector<LandscapeFigureArgs> out;
    const fs::path dir = fs::path(run_dir) / "landscapes";
    if (!fs::is_directory(dir)) return out;
    // <space>_<method>_seed<k>_<kind>_<n>.json
    static const std::regex name(
        R"(^(theta|lifted)_(.+)_seed(\d+)_(random|pca|delta-pca)_(\d+)\.json$)");
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().filename().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        std::smatch m;
        if (!std::regex_match(f, m, name)) continue;
        LandscapeFigureArgs a;
        a.run_dir = run_dir;
        a.method = m[2];
        // A name with a seed or grid beyond range is not one of ours: skipped, not a crash.
        long long seed = 0, grid = 0;
        if (!c_parse_int(m[3].str(), 0, std::numeric_limits<long long>::max(), &seed) ||
            !c_parse_int(m[5].str(), 2, 401, &grid))
            continue;
        a.seed = seed;
        a.directions = m[4];
        a.space = "both";
        a.cached_only = true;
        LandscapeFigureArgs* same = nullptr;
        for (auto& b : out)
            if (b.method == a.method && b.seed == a.seed && b.directions == a.directions) same = &b;
        if (!same) {
            out.push_back(a);
            same = &out.back();
        }
        (m[1] == "theta" ? same->grid_theta : same->grid_lifted) = static_cast<int>(grid);
    }
    return out;
}

int command_landscape(const LandscapeFigureArgs& args) {
    if (args.format != "png" && args.format != "svg" && args.format != "pdf") {
        std::fprintf(stderr, "liftlab-cli: --format must be png, svg or pdf\n");
        return 2;
    }
    int last_percent = -1;
    std::vector<RunLandscape> results;
    std::string figure;
    try {
        InterruptHandler interrupt("the landscape", "nothing partial is cached");
        const StopScope stop_scope(interrupt.flag());
        figure = render_landscape_figure(
            args,
            [&](double f) {
                const int percent = static_cast<int>(f * 100);
                if (percent != last_percent) {
                    std::fprintf(stderr, "\rlandscape %3d%%", percent);
                    std::fflush(stderr);
                    last_percent = percent;
                }
                return !interrupt.interrupted();
            },
            &results);
    } catch (const LandscapeCancelled&) {
        std::fprintf(stderr, "\nliftlab-cli: landscape cancelled (nothing cached)\n");
        return 130;
    } catch (const Stopped&) {
        std::fprintf(stderr, "\nliftlab-cli: landscape cancelled (nothing cached)\n");
        return 130;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%sliftlab-cli: %s\n", last_percent >= 0 ? "\n" : "",
                     error_message(e).c_str());
        return 2;
    }
    if (last_percent >= 0) std::fprintf(stderr, "\n");
    for (const auto& l : results) {
        std::fprintf(stderr,
                     "%-6s %s seed %llu, %s plane, %d×%d, %lld parameters: centre loss %s, "
                     "%s\n",
                     l.space.c_str(), l.method.c_str(), static_cast<unsigned long long>(l.seed),
                     l.kind.c_str(), l.grid.n_alpha, l.grid.n_beta,
                     static_cast<long long>(l.parameters), c_general(l.center_loss, 6).c_str(),
                     l.from_cache ? "from the cache"
                                  : ("computed in " + c_fixed(l.seconds, 2) + " s").c_str());
        for (const auto& [label, res] : l.max_residual)
            std::fprintf(stderr, "         trajectory %-16s max off-plane residual %s\n",
                         label.c_str(), c_general(res, 3).c_str());
        for (const auto& [label, file] : l.cut_trajectories)
            std::fprintf(stderr,
                         "         note: %s ends in a cut record (the run was killed while "
                         "writing it, or is still training): its %zu complete checkpoints are "
                         "drawn\n",
                         file.c_str(), l.trajectory_steps.at(label).size());
        std::fprintf(stderr, "         cache: %s\n", l.cache_path.c_str());
    }
    std::printf("%s\n", figure.c_str());
    return 0;
}

}  // namespace liftlab::cli
