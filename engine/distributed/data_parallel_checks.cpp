#include "distributed/data_parallel_checks.h"

#include <cstdint>
#include <stdexcept>

namespace liftlab {

namespace {

// FNV-1a: the same on every node (std::hash need not be).
std::int64_t fingerprint(const std::string& text) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return static_cast<std::int64_t>(h >> 1);
}

}  // namespace

void check_data_parallel_spec(const ExperimentSpec& spec, Communicator& comm) {
    for (const auto& [suffix, sub] : expand_sweep(spec))
        if (sub.batch_size < comm.world_size())
            throw std::invalid_argument(
                "data-parallel: batch_size " + std::to_string(sub.batch_size) + suffix +
                " is smaller than the world size " + std::to_string(comm.world_size()) +
                " (batch_size is the global batch, split over ranks)");
    auto reference = torch::full({1}, fingerprint(to_json(spec).dump()), torch::kInt64);
    const auto mine = reference.clone();
    comm.broadcast(reference, /*root=*/0, "spec fingerprint");
    auto mismatches = torch::full({1}, torch::equal(reference, mine) ? 0.0 : 1.0, torch::kFloat64);
    comm.all_reduce_sum(mismatches, "spec check");
    if (mismatches.item<double>() > 0)
        throw std::invalid_argument(
            "data-parallel: " + std::to_string(static_cast<int>(mismatches.item<double>())) +
            " rank(s) were given a different spec than rank 0 (same PRESET, --set, --seeds and "
            "--steps on every rank)");
}

}  // namespace liftlab
