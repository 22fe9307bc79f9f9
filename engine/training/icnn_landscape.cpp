#include "training/icnn_landscape.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/compute_threads.h"
#include "core/errors.h"
#include "core/path_component.h"
#include "data/dataset.h"
#include "diagnostics/landscape.h"
#include "run/run_files.h"
#include "run/trajectory_file.h"
#include "spec/experiment_spec.h"
#include "training/icnn_trainer.h"

namespace liftlab {

namespace {

namespace fs = std::filesystem;

struct Trajectory {
    std::vector<int64_t> steps;
    torch::Tensor theta, lifted;  // T × P, T × Q (float64)
    std::string file;
    bool cut_tail = false;  // its last record was cut and left out
};

std::string trajectory_file(const std::string& run_dir, const std::string& label, uint64_t seed) {
    return trajectory_path(run_dir, label, seed);
}

// run/trajectory_file.h's reader (bounded, no unpickler), in float64.
Trajectory load_trajectory(const std::string& file) {
    TrajectoryRecord t = read_trajectory(file);
    Trajectory out;
    out.steps = std::move(t.steps);
    out.theta = t.theta.to(torch::kFloat64).contiguous();
    out.lifted = t.lifted.to(torch::kFloat64).contiguous();
    out.file = file;
    out.cut_tail = t.cut_tail;
    return out;
}

ExperimentSpec load_run_spec(const std::string& run_dir) {
    const std::string path = run_dir + "/" + run_folder::kSpec;
    std::error_code ec;
    if (!fs::exists(path, ec))
        throw DataError(path, 0, "no spec.json here: is this a LiftLab run folder?");
    try {
        // Tolerant of folders written by earlier versions (keys since removed are ignored).
        return parse_recorded_spec(read_spec_json(path).json);
    } catch (const SpecError& e) {
        throw DataError(path, 0, e.what());
    }
}

std::vector<std::vector<int64_t>> shapes_of(const std::vector<torch::Tensor>& tensors) {
    std::vector<std::vector<int64_t>> out;
    for (const auto& t : tensors) out.push_back(t.sizes().vec());
    return out;
}

// Copies consecutive slices of the flat float64 vector `flat` into `params` (no autograd).
void load_flat(const torch::Tensor& flat, std::vector<torch::Tensor>& params) {
    torch::NoGradGuard no_grad;
    int64_t at = 0;
    for (auto& p : params) {
        const int64_t n = p.numel();
        p.copy_(flat.narrow(0, at, n).reshape(p.sizes()).to(p.dtype()));
        at += n;
    }
}

// Splits a flat θ-space vector into the ICNN weight list — the constrained tensors (clamped
// ≥ 0), then the free ones — and loads the rest into the model's extra parameters.
std::vector<torch::Tensor> split_theta(const torch::Tensor& flat,
                                       const std::vector<std::vector<int64_t>>& constrained,
                                       const std::vector<std::vector<int64_t>>& free,
                                       std::vector<torch::Tensor>& extra, torch::ScalarType dtype) {
    std::vector<torch::Tensor> out;
    int64_t at = 0;
    auto take = [&](const std::vector<int64_t>& shape, bool clamp) {
        int64_t n = 1;
        for (auto s : shape) n *= s;
        auto t = flat.narrow(0, at, n).reshape(shape);
        out.push_back((clamp ? t.clamp_min(0.0) : t).to(dtype));
        at += n;
    };
    for (const auto& shape : constrained) take(shape, true);
    for (const auto& shape : free) take(shape, false);
    load_flat(flat.narrow(0, at, flat.numel() - at), extra);
    return out;
}

}  // namespace

std::vector<std::string> trajectory_labels(const std::string& run_dir, uint64_t seed) {
    const auto spec = load_run_spec(run_dir);
    std::vector<std::string> out;
    for (const auto& m : spec.methods)
        if (fs::exists(trajectory_file(run_dir, m.label, seed))) out.push_back(m.label);
    return out;
}

namespace {

// Cells a side; throws std::invalid_argument for a bad space, directions, grid or eval size.
int landscape_grid(const RunLandscapeOptions& options) {
    if (options.space != "theta" && options.space != "lifted")
        throw std::invalid_argument("landscape space must be theta or lifted, not '" +
                                    options.space + "'");
    if (options.directions != "random" && options.directions != "pca" &&
        options.directions != "delta-pca")
        throw std::invalid_argument("landscape directions must be random, pca or delta-pca, not '" +
                                    options.directions + "'");
    const int n = options.grid > 0 ? options.grid : (options.space == "theta" ? 41 : 25);
    if (n < 2 || n > 401)
        throw std::invalid_argument("landscape grid must be 2 … 401 cells a side");
    if (options.eval_samples < 1) throw std::invalid_argument("eval_samples must be ≥ 1");
    return n;
}

// What a landscape reads from the run folder: the spec, the seed, the centre method and every
// trajectory of that seed.
struct LandscapeInputs {
    ExperimentSpec spec;
    uint64_t seed = 0;
    std::string anchor;
    MethodSpec anchor_method;
    std::map<std::string, Trajectory> trajectories;
};

LandscapeInputs load_landscape_inputs(const std::string& run_dir,
                                      const RunLandscapeOptions& options) {
    LandscapeInputs in;
    in.spec = load_run_spec(run_dir);
    if (!is_icnn_task(in.spec.task.kind))
        throw DataError(
            run_dir + "/" + run_folder::kSpec, 0,
            "landscapes are for the ICNN tasks; this run is '" + in.spec.task.kind + "'");
    const auto& seeds = in.spec.seeds;
    in.seed = options.seed < 0 ? seeds.front() : static_cast<uint64_t>(options.seed);
    if (std::find(seeds.begin(), seeds.end(), in.seed) == seeds.end())
        throw std::invalid_argument("seed " + std::to_string(in.seed) +
                                    " is not a seed of this run");
    const auto labels = trajectory_labels(run_dir, in.seed);
    if (labels.empty())
        throw DataError(run_dir + "/" + run_folder::kTrajectories, 0,
                        "no trajectories for seed " + std::to_string(in.seed) +
                            " (run with diagnostics.checkpoint_every > 0, e.g. preset "
                            "icnn-landscape)");
    in.anchor = options.method.empty() ? labels.front() : options.method;
    const MethodSpec* anchor = nullptr;
    for (const auto& m : in.spec.methods)
        if (m.label == in.anchor) anchor = &m;
    if (!anchor || std::find(labels.begin(), labels.end(), in.anchor) == labels.end())
        throw std::invalid_argument("method '" + in.anchor + "' has no trajectory for seed " +
                                    std::to_string(in.seed));
    in.anchor_method = *anchor;
    for (const auto& l : labels)
        in.trajectories[l] = load_trajectory(trajectory_file(run_dir, l, in.seed));
    return in;
}

// The anchor's trainer on the run's data, its parameters overwritten per cell; one copy per
// worker (a cell overwrites the parameters it evaluates). Worker w takes cells w, w + W, … of
// each batch on its own copy, single-threaded, so every cell is computed exactly as on one worker.
class CellModels {
public:
    CellModels(const LandscapeInputs& in, const Dataset& data, bool theta_space, int workers)
        : in_(in), data_(data), theta_space_(theta_space), workers_(workers) {
        models_.reserve(workers);
        models_.push_back(make());
        IcnnTrainer& trainer = *models_.front().trainer;
        constrained_ = trainer.icnn()->constrained_shapes();
        free_ = trainer.icnn()->free_shapes();
        dtype_ = models_.front().lifted.front().scalar_type();
    }

    // The flat parameter vector's layout in the landscape's space.
    ParameterLayout layout() const {
        ParameterLayout layout;
        if (!theta_space_) {
            layout.shapes = shapes_of(models_.front().lifted);
            return layout;
        }
        layout.shapes = constrained_;
        for (const auto& s : free_) layout.shapes.push_back(s);
        for (const auto& s : shapes_of(models_.front().extra)) layout.shapes.push_back(s);
        return layout;
    }
    void set_eval(torch::Tensor x_eval) { x_eval_ = std::move(x_eval); }
    double loss(const torch::Tensor& p) { return loss_on(models_.front(), p); }
    // The loss of a batch of cells (C × P → C) on every worker's copy (made here).
    BatchLoss batch() {
        while (static_cast<int>(models_.size()) < workers_) models_.push_back(make());
        return [this](const torch::Tensor& params) {
            const int64_t cells = params.size(0);
            std::vector<double> losses(cells);
            const int used = static_cast<int>(std::min<int64_t>(workers_, cells));
            if (used <= 1) {
                for (int64_t c = 0; c < cells; ++c) losses[c] = loss(params[c]);
            } else {
                std::vector<std::thread> pool;
                for (int w = 0; w < used; ++w)
                    pool.emplace_back([&, w] {
                        torch::NoGradGuard worker_no_grad;  // grad mode is per thread
                        torch::set_num_threads(1);
                        for (int64_t c = w; c < cells; c += used)
                            losses[c] = loss_on(models_[w], params[c]);
                    });
                for (auto& t : pool) t.join();
            }
            return torch::tensor(losses, torch::kFloat64);
        };
    }

private:
    struct Model {
        std::unique_ptr<IcnnTrainer> trainer;
        std::vector<torch::Tensor> lifted, extra;
    };

    Model make() {
        Model m;
        {
            std::lock_guard<std::mutex> lock(trainer_construction_mutex());
            m.trainer = std::make_unique<IcnnTrainer>(in_.spec, in_.anchor_method, data_, in_.seed);
        }
        m.lifted = m.trainer->lifted_parameters();
        m.extra = m.trainer->extra_parameters();
        return m;
    }

    // The loss of one flat parameter vector (float64, length P) on one model copy.
    double loss_on(Model& m, const torch::Tensor& p) {
        std::vector<torch::Tensor> theta;
        if (theta_space_) {
            theta = split_theta(p, constrained_, free_, m.extra, dtype_);
        } else {
            load_flat(p, m.lifted);
            theta = m.trainer->icnn()->strategy().readout(m.trainer->reference_pre_readout());
        }
        const double v = m.trainer->nll_with_weights(x_eval_, theta).item<double>();
        return std::isfinite(v) ? v : std::nan("");
    }

    const LandscapeInputs& in_;
    const Dataset& data_;
    bool theta_space_;
    int workers_;
    std::vector<Model> models_;
    std::vector<std::vector<int64_t>> constrained_, free_;
    torch::ScalarType dtype_ = torch::kFloat32;
    torch::Tensor x_eval_;
};

// The trajectories on the plane into `out`: every method with the same θ dimension (θ-space), or
// the anchor alone (its lifted space is its own). Returns all their plane coordinates.
torch::Tensor project_trajectories(const LandscapeInputs& in, bool theta_space,
                                   const torch::Tensor& center, const PlaneDirections& dirs,
                                   RunLandscape& out) {
    std::vector<torch::Tensor> all_coords;
    for (const auto& [label, t] : in.trajectories) {
        if (!theta_space && label != in.anchor) continue;
        const torch::Tensor& traj = theta_space ? t.theta : t.lifted;
        if (traj.size(1) != center.numel()) continue;  // e.g. softplus-wide
        torch::Tensor residual;
        const auto coords = project_onto_plane(traj, center, dirs, &residual);
        auto& pts = out.trajectories[label];
        for (int64_t i = 0; i < coords.size(0); ++i)
            pts.push_back({coords[i][0].item<double>(), coords[i][1].item<double>()});
        out.trajectory_steps[label] = t.steps;
        out.max_residual[label] = residual.max().item<double>();
        if (t.cut_tail) out.cut_trajectories[label] = t.file;
        all_coords.push_back(coords);
    }
    return torch::cat(all_coords);
}

std::string landscape_cache_path(const std::string& run_dir, const RunLandscape& out, int n) {
    std::string anchor = out.method;
    for (auto& c : anchor)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    return run_dir + "/landscapes/" + out.space + "_" + anchor + "_seed" +
           std::to_string(out.seed) + "_" + out.kind + "_" + std::to_string(n) + ".json";
}

}  // namespace

RunLandscape run_landscape(const std::string& run_dir, const RunLandscapeOptions& options,
                           const LandscapeProgress& progress) {
    const auto t0 = std::chrono::steady_clock::now();
    const int n = landscape_grid(options);
    const bool theta_space = options.space == "theta";
    const LandscapeInputs in = load_landscape_inputs(run_dir, options);
    const Trajectory& own = in.trajectories.at(in.anchor);
    const torch::Tensor& own_traj = theta_space ? own.theta : own.lifted;
    const torch::Tensor center = own_traj[own_traj.size(0) - 1].clone();

    // Single-threaded BLAS for the whole landscape (cells run on workers instead): the directions,
    // projections and range — and with them the cache key — must not depend on the thread state a
    // previous computation in this process left behind (the lifted grid after the θ grid missed
    // its cache because its range differed in the last bits).
    struct ThreadsRestore {
        int previous = torch::get_num_threads();
        ~ThreadsRestore() { set_compute_threads(previous); }
    } restore_threads;
    set_compute_threads(1);

    torch::NoGradGuard no_grad;
    const Dataset data = make_dataset(in.spec.task);
    const int workers =
        std::max(1, options.workers > 0 ? options.workers
                                        : static_cast<int>(std::thread::hardware_concurrency()));
    CellModels models(in, data, theta_space, workers);
    const ParameterLayout layout = models.layout();
    if (layout.numel() != center.numel())
        throw DataError(trajectory_file(run_dir, in.anchor, in.seed), 0,
                        "checkpoint has " + std::to_string(center.numel()) +
                            " parameters but the model of spec.json has " +
                            std::to_string(layout.numel()));

    PlaneDirections dirs;
    if (options.directions == "random")
        dirs = random_filter_normalised_directions(center, layout, options.direction_seed);
    else if (options.directions == "pca")
        dirs = pca_directions(own_traj);
    else
        dirs = delta_pca_directions(own_traj);

    RunLandscape out;
    out.space = options.space;
    out.kind = dirs.kind;
    out.method = in.anchor;
    out.seed = in.seed;
    out.parameters = center.numel();
    const double min_half = options.directions == "random" ? 1.0 : 1e-3;
    const LandscapeRange range = range_covering(
        project_trajectories(in, theta_space, center, dirs, out), options.margin, min_half);

    const int64_t n_eval = std::min<int64_t>(options.eval_samples, data.n_test());
    models.set_eval(data.x_test.narrow(0, 0, n_eval));
    const std::string tag = "icnn-landscape|" + options.space + "|" + in.anchor + "|seed" +
                            std::to_string(in.seed) + "|eval" + std::to_string(n_eval) + "|" +
                            in.spec.task.kind + "|" + std::to_string(in.spec.steps);
    const std::string key = landscape_cache_key(center, dirs, range, n, n, tag);
    out.cache_path = landscape_cache_path(run_dir, out, n);
    out.center_loss = models.loss(center);

    if (options.use_cache || options.cache_only) {
        PlaneTrajectories cached_traj;
        std::string kind;
        if (load_landscape(out.cache_path, key, out.grid, cached_traj, &kind)) {
            out.from_cache = true;
            return out;
        }
        if (options.cache_only) return out;
    }
    out.grid = compute_landscape(center, dirs, range, n, n, models.batch(), options.cells_per_batch,
                                 progress);
    save_landscape(out.cache_path, key, out.grid, dirs.kind, out.trajectories);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

}  // namespace liftlab
