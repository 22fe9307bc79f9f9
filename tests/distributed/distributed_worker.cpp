// One rank of a data-parallel training run, for the multi-process tests (test_data_parallel.cpp).
// Trains every backbone + last-layer method of a small regression spec for --steps steps, then
// saves, per method, the last layer W and the flat backbone parameters with torch::save.
//
//   liftlab-dist-worker --rank R --world-size N --port P --out FILE --steps K
//                       [--order backbone-first|w-first] [--die-at-step S] [--timeout SECONDS]
//   liftlab-dist-worker ... --mode statistics
//
// --mode statistics checks the closed form alone: fixed random features Φ (n × d, n < d included,
// where one process would take the Woodbury path), each rank all-reduces the statistics of its
// rows and saves the ridge and proximal W; the test compares them with one solve on all rows.
// --die-at-step makes rank 1 exit abruptly at that step (a crashed node). Without --rank the
// launcher's variables are read (torchrun, Slurm), as liftlab-cli does.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "data/dataset.h"
#include "distributed/communicator.h"
#include "distributed/launch_config.h"
#include "distributed/statistics_all_reduce.h"
#include "spec/experiment_spec.h"
#include "statistics_problem.h"
#include "training/method_trainer.h"

namespace {

liftlab::ExperimentSpec worker_spec(const std::string& order) {
    auto j = nlohmann::json::parse(R"({
        "name": "data-parallel",
        "task": {"input_dim": 8, "output_dim": 3, "teacher_hidden": [16], "n_train": 512,
                 "n_test": 64, "noise": 0.05},
        "backbone": {"hidden": [32], "feature_dim": 16},
        "optimizer": {"kind": "adam", "lr": 0.003},
        "methods": [{"name": "cf-prox", "lambda": 1.0}, {"name": "cf-ridge", "beta": 0.01},
                    {"name": "cf-rls", "rho": 0.9, "lambda": 1.0},
                    {"name": "cf-full", "beta": 0.01, "refresh_every": 5},
                    {"name": "adam", "lr": 0.003}],
        "batch_size": 32, "steps": 10, "log_every": 10, "threads": 1})");
    j["step_order"] = order;
    return liftlab::parse_spec(j);
}

// This rank's rows of each fixed problem, statistics all-reduced, then ridge and proximal W.
std::vector<torch::Tensor> statistics_mode(liftlab::Communicator* comm) {
    using liftlab::test::kStatisticsLambda;
    std::vector<torch::Tensor> saved;
    for (const auto& [phi, y, prior] : liftlab::test::statistics_problems()) {
        const int64_t n = phi.size(0);
        const int rank = comm ? comm->rank() : 0, world = comm ? comm->world_size() : 1;
        const int64_t begin = n * rank / world, end = n * (rank + 1) / world;
        liftlab::GramStatistics stats;
        stats.add(phi.narrow(0, begin, end - begin), y.narrow(0, begin, end - begin));
        if (comm) liftlab::all_reduce_statistics(stats, *comm);
        saved.push_back(liftlab::solve_statistics(stats, kStatisticsLambda));
        saved.push_back(liftlab::solve_statistics(stats, kStatisticsLambda, prior));
        saved.push_back(torch::full({1}, static_cast<double>(stats.count), torch::kFloat64));
    }
    return saved;
}

}  // namespace

int main(int argc, char** argv) {
    liftlab::LaunchConfig launch =
        liftlab::launch_config_from_environment().value_or(liftlab::LaunchConfig{});
    std::string out, order = "backbone-first", mode = "train";
    int steps = 10, die_at = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        if (key == "--rank")
            launch.rank = std::stoi(value);
        else if (key == "--world-size")
            launch.world_size = std::stoi(value);
        else if (key == "--port")
            launch.master_port = std::stoi(value);
        else if (key == "--out")
            out = value;
        else if (key == "--steps")
            steps = std::stoi(value);
        else if (key == "--order")
            order = value;
        else if (key == "--mode")
            mode = value;
        else if (key == "--die-at-step")
            die_at = std::stoi(value);
        else if (key == "--timeout")
            launch.timeout_seconds = std::stod(value);
        else {
            std::fprintf(stderr, "worker: unknown option %s\n", key.c_str());
            return 2;
        }
    }
    try {
        torch::set_num_threads(1);
        const auto comm = liftlab::join_process_group(launch);
        if (mode == "statistics") {
            torch::save(statistics_mode(comm.get()), out);
            std::fflush(stderr);
            ::_exit(0);
        }
        const auto spec = worker_spec(order);
        const auto data = liftlab::make_dataset(spec.task);
        std::vector<torch::Tensor> saved;
        for (const auto& m : spec.methods) {
            liftlab::MethodTrainer trainer(spec, m, data, /*seed=*/7);
            if (comm) trainer.attach_communicator(comm);
            for (int step = 1; step <= steps; ++step) {
                if (step == die_at && launch.rank == 1) {
                    std::fprintf(stderr, "worker: rank 1 dies at step %d\n", step);
                    std::fflush(stderr);
                    ::_exit(7);
                }
                trainer.step();
            }
            std::vector<torch::Tensor> flat;
            for (const auto& p : trainer.backbone().parameters())
                flat.push_back(p.detach().flatten());
            saved.push_back(trainer.last_layer().to(torch::kFloat64).clone());
            saved.push_back(torch::cat(flat).clone());
        }
        if (!out.empty()) torch::save(saved, out);
        std::fprintf(stderr, "worker: rank %d done\n", launch.rank);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "worker: %s\n", e.what());
        std::fflush(stderr);
        ::_exit(3);
    }
    std::fflush(stderr);
    ::_exit(0);  // skip the process group's teardown; the test only needs the file
}
