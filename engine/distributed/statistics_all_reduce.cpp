#include "distributed/statistics_all_reduce.h"

namespace liftlab {

void all_reduce_statistics(GramStatistics& stats, Communicator& comm) {
    torch::NoGradGuard no_grad;
    if (!stats.gram.defined()) throw std::invalid_argument("all_reduce_statistics: no data");
    const auto n = torch::full({1}, static_cast<double>(stats.count), torch::kFloat64);
    auto packed = torch::cat({stats.gram.to(torch::kFloat64).flatten(),
                              stats.cross.to(torch::kFloat64).flatten(), n})
                      .contiguous();
    comm.all_reduce_sum(packed, "closed-form statistics");
    const int64_t g = stats.gram.numel(), c = stats.cross.numel();
    stats.gram = packed.narrow(0, 0, g).view(stats.gram.sizes()).clone();
    stats.cross = packed.narrow(0, g, c).view(stats.cross.sizes()).clone();
    stats.count = static_cast<int64_t>(std::llround(packed[g + c].item<double>()));
}

std::int64_t statistics_payload_bytes(std::int64_t d, std::int64_t k) {
    const std::int64_t p = d + 1;  // with the bias column
    return (p * p + p * k + 1) * static_cast<std::int64_t>(sizeof(double));
}

std::int64_t feature_gather_payload_bytes(std::int64_t rows, std::int64_t d, std::int64_t k) {
    return rows * (d + 1 + k) * static_cast<std::int64_t>(sizeof(double));
}

}  // namespace liftlab
