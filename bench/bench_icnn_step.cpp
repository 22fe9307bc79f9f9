// Training steps per second of LiftLab's ICNN trainer on the icnn-ebm-1d preset's sizes (ICNN
// 128 wide × 3 layers, fresh 1-D Gumbel samples, batch 256, Adam 1e-3, gradient clip 1, the
// training log Z by composite Gauss–Legendre on icnn.train_quadrature_points nodes, default 512),
// for pgd, softplus and lifter, printed as JSON lines (bench/bench_record.h, case "train_step")
// beside bench/reference_icnn_step.py (the same step in PyTorch). Shoulder tracking is off so
// both sides do exactly the step.
// usage: liftlab-bench-icnn THREADS [TRAINING_QUADRATURE_NODES [METHOD,...]]
//   (METHOD list: only those, e.g. `lifter` to time one step with farm-bench)
// For the lifter a second line (case "readout_floor") gives the floor its readouts set: the three
// passes over the readout weights every step needs (y = b + Θh, ∂ℓ/∂h = Θᵀg, the Adam update with
// ∂ℓ/∂Θ = g hᵀ formed in the pass), timed alone with the engine's own kernels on the lifter's
// shapes — the time the lifter's step cannot go below however the rest of it is written — and the
// bytes they move.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench_record.h"
#include "bench_timer.h"
#include "core/allocator_tuning.h"
#include "core/compute_threads.h"
#include "data/dataset.h"
#include "icnn/positivity.h"
#include "nn/readout_kernel.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "training/adam_kernel.h"
#include "training/icnn_trainer.h"

namespace {

// The lifter's readout passes alone, on copies of its readout weights (so the trainer is
// untouched): seconds per step and the bytes they read and write (Θ twice, then Θ, m, v read and
// written).
std::pair<double, double> readout_floor(liftlab::LifterPositivity& lifter) {
    struct Readout {
        torch::Tensor w, m, v, bias, y, g, gh;
    };
    std::vector<Readout> readouts;
    const size_t count = lifter.constrained_count() + lifter.free_shapes().size();
    for (size_t i = 0; i < count; ++i) {
        auto& layer = lifter.readout_layer(i);
        const auto w = layer->weight.detach().clone().contiguous();
        const int64_t rows = w.size(0);
        readouts.push_back({w, torch::zeros_like(w), torch::zeros_like(w),
                            layer->bias.detach().clone(), torch::empty({rows}),
                            torch::full({rows}, 1e-3f), torch::empty({w.size(1)})});
    }
    const auto h = torch::randn({readouts.front().w.size(1)});
    liftlab::AdamCoefficients k;
    k.step_size = 1e-3;
    double bytes = 0;
    for (const auto& r : readouts) bytes += 8.0 * static_cast<double>(r.w.numel()) * 4;
    const double s = liftlab::bench::median_seconds_per_call(
        [&] {
            for (auto& r : readouts) {
                const int64_t rows = r.w.size(0), cols = r.w.size(1);
                liftlab::readout_forward(r.w.data_ptr<float>(), h.data_ptr<float>(),
                                         r.bias.data_ptr<float>(), r.y.data_ptr<float>(), rows,
                                         cols);
                liftlab::readout_backward_code(r.w.data_ptr<float>(), r.g.data_ptr<float>(),
                                               r.gh.data_ptr<float>(), rows, cols);
                liftlab::adam_update_outer(r.w.data_ptr<float>(), r.m.data_ptr<float>(),
                                           r.v.data_ptr<float>(), rows, cols, r.g.data_ptr<float>(),
                                           h.data_ptr<float>(), 1, k);
            }
        },
        /*calls_per_rep=*/10, /*reps=*/5, /*warmup_calls=*/3);
    return {s, bytes};
}

}  // namespace

int main(int argc, char** argv) {
    liftlab::tune_allocator();
    const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    liftlab::set_compute_threads(threads);
    auto spec = liftlab::parse_spec(liftlab::load_spec_source("icnn-ebm-1d"));
    if (argc > 2) spec.icnn.train_quadrature_points = std::atoi(argv[2]);
    spec.diagnostics.shoulder_every = 0;
    spec.diagnostics.trace_coordinates = 0;
    const auto data = liftlab::make_dataset(spec.task);
    std::vector<std::string> methods = {"pgd", "softplus", "lifter"};
    if (argc > 3) {
        methods.clear();
        std::stringstream list(argv[3]);
        for (std::string m; std::getline(list, m, ',');) methods.push_back(m);
    }
    for (const std::string& name : methods) {
        liftlab::MethodSpec method;
        method.name = method.label = name;
        liftlab::IcnnTrainer trainer(spec, method, data, /*seed=*/0);
        const double s = liftlab::bench::median_seconds_per_call([&] { trainer.step(); },
                                                                 /*calls_per_rep=*/10,
                                                                 /*reps=*/5, /*warmup_calls=*/5);
        const nlohmann::ordered_json params = {{"preset", "icnn-ebm-1d"},
                                               {"points", spec.icnn.train_quadrature_points}};
        liftlab::bench::print_record("liftlab-bench-icnn", "train_step", name, threads, params,
                                     {{"steps_per_s", 1.0 / s}});
        if (auto* lifter = dynamic_cast<liftlab::LifterPositivity*>(&trainer.icnn()->strategy())) {
            const auto [floor_s, bytes] = readout_floor(*lifter);
            liftlab::bench::print_record("liftlab-bench-icnn", "readout_floor", name, threads,
                                         params,
                                         {{"readout_ms", 1e3 * floor_s},
                                          {"step_ms", 1e3 * s},
                                          {"moved_mb", bytes / 1e6},
                                          {"readout_gb_per_s", bytes / floor_s / 1e9}});
        }
    }
    return 0;
}
