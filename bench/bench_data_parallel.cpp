// Data-parallel scaling on this machine (docs/benchmarks.md "Beyond one machine"): one rank of a
// c10d/Gloo group on 127.0.0.1; bench/data_parallel.sh starts 1 and 2 ranks and collects rank 0's
// JSON lines. Cases:
//   step      cf-prox and adam training steps at a large global batch (each rank: batch / N rows)
//   gram      cf-full's Gram accumulation over the whole training set (each rank: n / N rows),
//             including the statistics all-reduce
// Every line also carries the payload bytes this rank sent per step/refresh (measured by the
// communicator) and the bytes that gathering the features instead would have moved. Rank 0 prints
// JSON lines (bench/bench_record.h): cases "step", "gram" and "statistics_bytes".
// usage: liftlab-bench-ddp --rank R --world-size N --port P [--threads T] [--batch B]
//                          [--n-full N] [--feature-dim D]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_record.h"
#include "bench_timer.h"
#include "core/allocator_tuning.h"
#include "core/compute_threads.h"
#include "data/dataset.h"
#include "distributed/communicator.h"
#include "distributed/launch_config.h"
#include "distributed/statistics_all_reduce.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "training/method_trainer.h"

int main(int argc, char** argv) {
    liftlab::tune_allocator();
    liftlab::LaunchConfig launch;
    int threads = 1, batch = 1024, feature_dim = 64;
    int64_t n_full = 65536;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--rank")
            launch.rank = std::stoi(v);
        else if (k == "--world-size")
            launch.world_size = std::stoi(v);
        else if (k == "--port")
            launch.master_port = std::stoi(v);
        else if (k == "--threads")
            threads = std::stoi(v);
        else if (k == "--batch")
            batch = std::stoi(v);
        else if (k == "--n-full")
            n_full = std::stoll(v);
        else if (k == "--feature-dim")
            feature_dim = std::stoi(v);
    }
    liftlab::set_compute_threads(threads);  // torch and OpenBLAS together, subnormals flushed
    const auto comm = liftlab::join_process_group(launch);
    const int world = launch.world_size;

    // cf-regression's model and data, at a larger batch and a larger training set.
    auto j = liftlab::load_spec_source("cf-regression");
    j["batch_size"] = batch;
    j["task"]["n_train"] = n_full;
    j["task"]["n_test"] = 256;
    j["backbone"]["feature_dim"] = feature_dim;
    j["threads"] = threads;
    j["methods"] =
        nlohmann::json::array({{{"name", "adam"}, {"lr", 0.001}},
                               {{"name", "cf-prox"}, {"lambda", 100.0}},
                               {{"name", "cf-full"}, {"beta", 0.001}, {"refresh_every", 1}}});
    const auto spec = liftlab::parse_spec(j);
    const auto data = liftlab::make_dataset(spec.task);
    const int64_t d = feature_dim, k = data.output_dim();
    int64_t param_bytes = 0;  // one gradient all-reduce: every backbone parameter, float32

    auto report = [&](const char* kase, const char* method, double seconds, int64_t bytes,
                      int64_t gather_bytes) {
        if (launch.rank != 0) return;
        liftlab::bench::print_record("liftlab-bench-ddp", kase, method, threads,
                                     {{"ranks", world},
                                      {"batch", batch},
                                      {"n_full", n_full},
                                      {"feature_dim", static_cast<long long>(d)}},
                                     {{"steps_per_s", 1.0 / seconds},
                                      {"sent_bytes", bytes},
                                      {"gradient_bytes", param_bytes},
                                      {"gather_bytes", gather_bytes}});
    };

    for (const auto& m : spec.methods) {
        liftlab::MethodTrainer trainer(spec, m, data, /*seed=*/0);
        if (comm) trainer.attach_communicator(comm);
        param_bytes = 0;
        for (const auto& p : trainer.backbone().parameters()) param_bytes += p.numel() * 4;
        if (m.name == "cf-full") {
            // One step = one full-data refresh (the Gram accumulation) + one θ step; the θ step
            // is small beside n_full rows, so this is the accumulation's rate.
            const int64_t before = comm ? comm->payload_bytes() : 0;
            const double s = liftlab::bench::median_seconds_per_call([&] { trainer.step(); }, 1,
                                                                     /*reps=*/5, 1);
            const int64_t bytes = comm ? (comm->payload_bytes() - before) / 6 : 0;
            // Gathering instead: every rank's n/N feature rows (+ targets) to everyone.
            report("gram", "cf-full", s, bytes,
                   liftlab::feature_gather_payload_bytes(n_full / world, d, k));
            continue;
        }
        const int64_t before = comm ? comm->payload_bytes() : 0;
        const int calls = 20, reps = 5, warmup = 5;
        const double s =
            liftlab::bench::median_seconds_per_call([&] { trainer.step(); }, calls, reps, warmup);
        const int64_t bytes = comm ? (comm->payload_bytes() - before) / (calls * reps + warmup) : 0;
        report(
            "step", m.name.c_str(), s, bytes,
            m.name == "cf-prox" ? liftlab::feature_gather_payload_bytes(batch / world, d, k) : 0);
    }
    if (launch.rank == 0)
        liftlab::bench::print_record(
            "liftlab-bench-ddp", "statistics_bytes", "", threads,
            {{"feature_dim", static_cast<long long>(d)}, {"outputs", static_cast<long long>(k)}},
            {{"statistics_bytes",
              static_cast<long long>(liftlab::statistics_payload_bytes(d, k))}});
    std::fflush(stdout);
    std::_Exit(0);  // skip the process group's teardown
}
