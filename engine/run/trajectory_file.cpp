#include "run/trajectory_file.h"

#include "core/bounded_input.h"
#include "core/errors.h"
#include "core/path_component.h"
#include "run/run_folder_schema.h"
#include "run/state_archive.h"

namespace liftlab {

namespace {

constexpr std::uint64_t kMaxTrajectoryBytes = std::uint64_t{4} << 30;  // as a state file

}  // namespace

std::string trajectory_path(const std::string& run_dir, const std::string& label,
                            std::uint64_t seed) {
    // The label is a safe path component (parse_spec); a sweep suffix may hold any text.
    return run_dir + "/" + run_folder::kTrajectories + "/" + to_safe_path_component(label) +
           "_seed" + std::to_string(seed) + ".pt";
}

std::string trajectory_bytes(const std::vector<std::int64_t>& steps,
                             const std::vector<torch::Tensor>& theta,
                             const std::vector<torch::Tensor>& lifted) {
    StateArchive a;
    a.put_text("trajectory", "1");
    a.put("steps", torch::tensor(steps, torch::kInt64));
    a.put("theta", torch::stack(theta));
    a.put("lifted", torch::stack(lifted));
    return a.serialize();
}

TrajectoryRecord read_trajectory(const std::string& path) {
    // Four bytes say whether this is an earlier LiftLab's LibTorch archive (a zip): refused
    // before any parser sees it.
    const std::string bytes = read_regular_file(path, kMaxTrajectoryBytes);
    if (bytes.compare(0, 4, std::string("PK\x03\x04", 4)) == 0)
        throw DataError(path, 0,
                        "a trajectory file of an earlier LiftLab (a LibTorch archive), which is "
                        "no longer read: run the method again to record its trajectory");
    const StateArchive a = StateArchive::parse(bytes, path);
    if (!a.has("trajectory")) throw DataError(path, 0, "not a LiftLab trajectory file");
    TrajectoryRecord t;
    const torch::Tensor steps = a.tensor("steps");
    t.theta = a.tensor("theta");
    t.lifted = a.tensor("lifted");
    if (steps.scalar_type() != torch::kInt64 || steps.dim() != 1 || steps.size(0) < 1 ||
        t.theta.dim() != 2 || t.lifted.dim() != 2 || t.theta.size(0) != steps.size(0) ||
        t.lifted.size(0) != steps.size(0) || !t.theta.is_floating_point() ||
        !t.lifted.is_floating_point())
        throw DataError(path, 0, "expected {steps (T), theta (T × P), lifted (T × Q)}");
    const auto s = steps.contiguous();
    t.steps.assign(s.data_ptr<std::int64_t>(), s.data_ptr<std::int64_t>() + s.numel());
    return t;
}

}  // namespace liftlab
