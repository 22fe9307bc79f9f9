// Training steps per second of LiftLab's own trainer (adam, cf-prox) on the cf-regression preset's
// sizes, printed as JSON lines (bench/bench_record.h, case "train_step") so bench/side_by_side.sh
// can set them beside the PyTorch reference.
// usage: liftlab-bench-steps THREADS
#include <cstdio>
#include <cstdlib>

#include "bench_record.h"
#include "bench_timer.h"
#include "core/allocator_tuning.h"
#include "core/compute_threads.h"
#include "data/dataset.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "training/method_trainer.h"

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    liftlab::tune_allocator();
    liftlab::set_compute_threads(threads);  // torch and OpenBLAS
    auto spec = liftlab::parse_spec(liftlab::load_spec_source("cf-regression"));
    const auto data = liftlab::make_dataset(spec.task);
    for (const char* name : {"adam", "cf-prox"}) {
        const liftlab::MethodSpec* method = nullptr;
        for (const auto& m : spec.methods)
            if (m.name == name) method = &m;
        liftlab::MethodTrainer trainer(spec, *method, data, /*seed=*/0);
        const double s = liftlab::bench::median_seconds_per_call([&] { trainer.step(); },
                                                                 /*calls_per_rep=*/200,
                                                                 /*reps=*/5, /*warmup_calls=*/50);
        liftlab::bench::print_record("liftlab-bench-steps", "train_step", name, threads,
                                     {{"preset", "cf-regression"}, {"batch", spec.batch_size}},
                                     {{"steps_per_s", 1.0 / s}});
    }
    return 0;
}
