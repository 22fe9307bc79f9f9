#include "run/trajectory_file.h"

#include <limits>

#include "core/bounded_input.h"
#include "core/errors.h"
#include "core/path_component.h"
#include "run/run_folder_schema.h"
#include "run/state_archive.h"

namespace liftlab {

namespace {

constexpr std::uint64_t kMaxTrajectoryBytes = std::uint64_t{4} << 30;  // as a state file
constexpr const char* kTrajectoryMagic = "LIFTLAB-TRAJECTORY 2\n";

}  // namespace

std::string trajectory_path(const std::string& run_dir, const std::string& label,
                            std::uint64_t seed) {
    // The label is a safe path component (parse_spec); a sweep suffix may hold any text.
    return run_dir + "/" + run_folder::kTrajectories + "/" + to_safe_path_component(label) +
           "_seed" + std::to_string(seed) + ".pt";
}

std::string trajectory_record_bytes(const std::vector<std::int64_t>& steps,
                                    const std::vector<torch::Tensor>& theta,
                                    const std::vector<torch::Tensor>& lifted) {
    StateArchive a;
    a.put("steps", torch::tensor(steps, torch::kInt64));
    a.put("theta", torch::stack(theta));
    a.put("lifted", torch::stack(lifted));
    const std::string bytes = a.serialize();
    return std::to_string(bytes.size()) + "\n" + bytes;
}

std::string trajectory_bytes(const std::vector<std::int64_t>& steps,
                             const std::vector<torch::Tensor>& theta,
                             const std::vector<torch::Tensor>& lifted) {
    return std::string(kTrajectoryMagic) + trajectory_record_bytes(steps, theta, lifted);
}

namespace {

// One record's tensors, checked against the file's first record (widths and dtypes) and the
// steps before it (strictly increasing).
struct Part {
    torch::Tensor steps, theta, lifted;
};

Part checked_part(const StateArchive& a, const std::string& path, const Part* first,
                  std::int64_t last_step) {
    Part p{a.tensor("steps"), a.tensor("theta"), a.tensor("lifted")};
    const auto k = p.steps.dim() == 1 ? p.steps.size(0) : -1;
    if (p.steps.scalar_type() != torch::kInt64 || k < 1 || p.theta.dim() != 2 ||
        p.lifted.dim() != 2 || p.theta.size(0) != k || p.lifted.size(0) != k ||
        !p.theta.is_floating_point() || !p.lifted.is_floating_point())
        throw DataError(path, 0, "expected {steps (T), theta (T × P), lifted (T × Q)}");
    if (first &&
        (p.theta.size(1) != first->theta.size(1) || p.lifted.size(1) != first->lifted.size(1) ||
         p.theta.scalar_type() != first->theta.scalar_type() ||
         p.lifted.scalar_type() != first->lifted.scalar_type()))
        throw DataError(path, 0,
                        "a record's checkpoints differ in width or dtype from the first's");
    const auto s = p.steps.contiguous();
    for (std::int64_t i = 0; i < k; ++i) {
        const std::int64_t step = s.data_ptr<std::int64_t>()[i];
        if (step <= last_step)
            throw DataError(path, 0,
                            "checkpoint steps are not increasing (" + std::to_string(step) +
                                " after " + std::to_string(last_step) + ")");
        last_step = step;
    }
    return p;
}

TrajectoryRecord joined_record(const std::vector<Part>& parts, bool cut_tail) {
    std::vector<torch::Tensor> steps, theta, lifted;
    for (const auto& p : parts) {
        steps.push_back(p.steps);
        theta.push_back(p.theta);
        lifted.push_back(p.lifted);
    }
    TrajectoryRecord t;
    const auto s = torch::cat(steps).contiguous();
    t.steps.assign(s.data_ptr<std::int64_t>(), s.data_ptr<std::int64_t>() + s.numel());
    t.theta = parts.size() == 1 ? theta.front() : torch::cat(theta);
    t.lifted = parts.size() == 1 ? lifted.front() : torch::cat(lifted);
    t.cut_tail = cut_tail;
    return t;
}

}  // namespace

TrajectoryRecord read_trajectory(const std::string& path) {
    // Four bytes say whether this is an earlier LiftLab's LibTorch archive (a zip): refused
    // before any parser sees it.
    const std::string bytes = read_regular_file(path, kMaxTrajectoryBytes);
    if (bytes.compare(0, 4, std::string("PK\x03\x04", 4)) == 0)
        throw DataError(path, 0,
                        "a trajectory file of an earlier LiftLab (a LibTorch archive), which is "
                        "no longer read: run the method again to record its trajectory");
    const std::string magic(kTrajectoryMagic);
    std::vector<Part> parts;
    std::int64_t last_step = std::numeric_limits<std::int64_t>::min();
    if (bytes.compare(0, magic.size(), magic) != 0) {
        // The earlier single-archive format: one record, no length line.
        const StateArchive a = StateArchive::parse(bytes, path);
        if (!a.has("trajectory")) throw DataError(path, 0, "not a LiftLab trajectory file");
        parts.push_back(checked_part(a, path, nullptr, last_step));
        return joined_record(parts, false);
    }
    std::size_t at = magic.size();
    bool cut = false;
    while (at < bytes.size()) {
        // <length>\n: at most 12 digits; a line that stops at the end of the file is a cut tail.
        const std::size_t eol = bytes.find('\n', at);
        const std::size_t digits = (eol == std::string::npos ? bytes.size() : eol) - at;
        if (digits == 0 || digits > 12 || bytes.find_first_not_of("0123456789", at) < at + digits)
            throw DataError(path, 0, "a record's length line is not a number");
        if (eol == std::string::npos) {
            cut = true;
            break;
        }
        const std::uint64_t length = std::stoull(bytes.substr(at, digits));
        if (length > bytes.size() - eol - 1) {
            cut = true;
            break;
        }
        const StateArchive a = StateArchive::parse(bytes.substr(eol + 1, length), path);
        parts.push_back(checked_part(a, path, parts.empty() ? nullptr : &parts.front(), last_step));
        last_step = parts.back().steps[-1].item<std::int64_t>();
        at = eol + 1 + length;
    }
    if (parts.empty())
        throw DataError(path, 0,
                        cut ? "holds no complete checkpoint record (cut while being written?)"
                            : "holds no checkpoint record");
    return joined_record(parts, cut);
}

}  // namespace liftlab
