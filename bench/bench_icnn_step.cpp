// Training steps per second of LiftLab's ICNN trainer on the icnn-ebm-1d preset's sizes (ICNN
// 128 wide × 3 layers, fresh 1-D Gumbel samples, batch 256, Adam 1e-3, gradient clip 1, the
// training log Z by composite Gauss–Legendre on icnn.train_quadrature_points nodes, default 512),
// for pgd, softplus and lifter, printed as JSON lines
// beside bench/reference_icnn_step.py (the same step in PyTorch). Shoulder tracking is off so
// both sides do exactly the step.
// usage: liftlab-bench-icnn THREADS [TRAINING_QUADRATURE_NODES [METHOD,...]]
//   (METHOD list: only those, e.g. `lifter` to time one step with farm-bench)
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "bench_timer.h"
#include "core/allocator_tuning.h"
#include "core/compute_threads.h"
#include "data/dataset.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "training/icnn_trainer.h"

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
        std::printf(
            "{\"impl\": \"liftlab\", \"method\": \"%s\", \"threads\": %d, \"points\": %d, "
            "\"steps_per_s\": %.2f}\n",
            name.c_str(), threads, spec.icnn.train_quadrature_points, 1.0 / s);
        std::fflush(stdout);
    }
    return 0;
}
