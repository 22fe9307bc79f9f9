// Where a process sits in a data-parallel job: rank, world size and the rendezvous address. Read
// from the conventions researchers' launchers already use — torchrun (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT) and Slurm srun (SLURM_PROCID, SLURM_NTASKS, SLURM_JOB_NODELIST) — or
// given explicitly (liftlab-cli run --rank/--world-size/--master). Torch-free.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace liftlab {

class Communicator;

struct LaunchConfig {
    static constexpr int kDefaultPort = 29500;  // torchrun's default MASTER_PORT
    int rank = 0;
    int world_size = 1;
    std::string master_addr = "127.0.0.1";
    int master_port = kDefaultPort;
    // Rendezvous and every collective give up after this long, so a dead or stuck peer makes
    // the others fail with a message instead of hanging.
    double timeout_seconds = 120;
    std::string source = "single process";  // torchrun | slurm | command line (for messages)

    bool distributed() const { return world_size > 1; }
};

using EnvironmentLookup = std::function<const char*(const char*)>;

// torchrun's variables first (RANK and WORLD_SIZE), then Slurm's (SLURM_PROCID and SLURM_NTASKS >
// 1; the master is MASTER_ADDR or the first host of SLURM_JOB_NODELIST, the port MASTER_PORT or
// the default). std::nullopt when neither launcher set anything. Throws std::invalid_argument
// naming the variable when a value is malformed.
std::optional<LaunchConfig> launch_config_from_environment(const EnvironmentLookup& getenv);
std::optional<LaunchConfig> launch_config_from_environment();  // the process environment

// "HOST:PORT" (or "HOST", keeping the default port). Throws std::invalid_argument.
void parse_master_address(const std::string& text, LaunchConfig& config);

// The first host of a Slurm node list: "node[03-05,9],gpu1" → "node03". Throws
// std::invalid_argument on an empty or malformed list.
std::string first_slurm_host(const std::string& nodelist);

// Joins the process group (blocking until every rank arrived, at most timeout_seconds). Returns
// null for a single process. Throws CommunicationError when the rendezvous fails.
std::shared_ptr<Communicator> join_process_group(const LaunchConfig& config);

}  // namespace liftlab
