// trajectories/<label>_seed<k>.pt: the ICNN family's parameter checkpoints of one (method, seed),
// which `liftlab-cli landscape` and the window's Landscape tab project, and which `run --resume`
// continues. Written in the project's bounded state format (run/state_archive.h), so reading a
// damaged or hostile file can only end in a DataError: no LibTorch unpickler is involved. Keys:
// "trajectory" (text "1"), "steps" (T, int64), "theta" (T × P) and "lifted" (T × Q), the
// checkpoints' own dtype. A file of an earlier LiftLab (a torch::save archive) is refused with a
// clear error, not read.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace liftlab {

struct TrajectoryRecord {
    std::vector<std::int64_t> steps;  // T checkpoint steps
    torch::Tensor theta, lifted;      // T × P, T × Q
};

// `<run_dir>/trajectories/<label as a safe path component>_seed<seed>.pt`.
std::string trajectory_path(const std::string& run_dir, const std::string& label,
                            std::uint64_t seed);

// The file's bytes for checkpoints at `steps` (one row of `theta` and of `lifted` per step).
std::string trajectory_bytes(const std::vector<std::int64_t>& steps,
                             const std::vector<torch::Tensor>& theta,
                             const std::vector<torch::Tensor>& lifted);

// Reads and checks a trajectory file (T ≥ 1, matching rows). Throws DataError naming the file.
TrajectoryRecord read_trajectory(const std::string& path);

}  // namespace liftlab
