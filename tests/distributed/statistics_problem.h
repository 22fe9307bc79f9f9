// The fixed least-squares problems of the statistics test, generated identically in the worker and
// in the test: Φ (n × d), Y (n × 3) and a prior W0 (d × 3), float64. One has n > d, one n < d.
#pragma once
#include <torch/torch.h>

#include <utility>
#include <vector>

namespace liftlab::test {

struct StatisticsProblem {
    torch::Tensor phi, y, prior;
};

inline std::vector<StatisticsProblem> statistics_problems() {
    std::vector<StatisticsProblem> out;
    for (const auto& [n, d] : {std::pair<int64_t, int64_t>{96, 24}, {20, 48}}) {
        torch::manual_seed(n * 1000 + d);
        StatisticsProblem p;
        p.phi = torch::randn({n, d}, torch::kFloat64);
        p.y = torch::randn({n, 3}, torch::kFloat64);
        p.prior = torch::randn({d, 3}, torch::kFloat64);
        out.push_back(p);
    }
    return out;
}

constexpr double kStatisticsLambda = 0.5;

}  // namespace liftlab::test
