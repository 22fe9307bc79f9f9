// trajectories/<label>_seed<k>.pt: the ICNN family's parameter checkpoints of one (method, seed),
// which `liftlab-cli landscape` and the window's Landscape tab project, and which `run --resume`
// continues. An append-only log, so that a run adds each log point's checkpoints without
// rewriting the file:
//
//   LIFTLAB-TRAJECTORY 2\n  then records  <length>\n<a bounded state archive of that length>
//
// Each record (run/state_archive.h, so reading a damaged or hostile file can only end in a
// DataError: no LibTorch unpickler is involved) holds "steps" (k, int64), "theta" (k × P) and
// "lifted" (k × Q) in the checkpoints' own dtype; the file is their concatenation, steps strictly
// increasing. A process killed while appending, or a file read while its run appends, ends in a
// cut record: the reader leaves it out and says so (`cut_tail`). A file of the earlier single-
// archive format ("LIFTLAB-STATE 1" with key "trajectory") is still read; one of an earlier
// LiftLab's torch::save archive is refused with a clear error, not read.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace liftlab {

struct TrajectoryRecord {
    std::vector<std::int64_t> steps;  // T checkpoint steps
    torch::Tensor theta, lifted;      // T × P, T × Q
    bool cut_tail = false;  // the file ended in a cut record, left out (a killed or live writer)
};

// `<run_dir>/trajectories/<label as a safe path component>_seed<seed>.pt`.
std::string trajectory_path(const std::string& run_dir, const std::string& label,
                            std::uint64_t seed);

// A whole file's bytes for checkpoints at `steps` (one row of `theta` and of `lifted` per step):
// the header and one record.
std::string trajectory_bytes(const std::vector<std::int64_t>& steps,
                             const std::vector<torch::Tensor>& theta,
                             const std::vector<torch::Tensor>& lifted);
// One record's bytes, to append to a file begun by trajectory_bytes.
std::string trajectory_record_bytes(const std::vector<std::int64_t>& steps,
                                    const std::vector<torch::Tensor>& theta,
                                    const std::vector<torch::Tensor>& lifted);

// Reads and checks a trajectory file (T ≥ 1 complete checkpoints, matching rows and widths,
// steps increasing). Throws DataError naming the file.
TrajectoryRecord read_trajectory(const std::string& path);

}  // namespace liftlab
