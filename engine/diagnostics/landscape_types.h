// The torch-free values of a loss landscape (diagnostics/landscape.h computes them): the grid,
// its range, projected trajectories, progress and cancellation. Front ends include this header
// without pulling in LibTorch.
#pragma once
#include <array>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace liftlab {

struct LandscapeRange {
    double alpha_min = -1, alpha_max = 1, beta_min = -1, beta_max = 1;
};

struct LandscapeGrid {
    int n_alpha = 0, n_beta = 0;
    LandscapeRange range;
    std::vector<double> loss;  // row-major [i_beta * n_alpha + i_alpha]; non-finite losses are NaN
    double at(int i_alpha, int i_beta) const;  // throws std::out_of_range
    double alpha(int i) const;  // alpha_min + i (alpha_max − alpha_min)/(n_alpha − 1)
    double beta(int j) const;
};

using LandscapeProgress = std::function<bool(double fraction)>;  // false cancels

class LandscapeCancelled : public std::runtime_error {
public:
    LandscapeCancelled() : std::runtime_error("landscape computation cancelled") {}
};

using PlaneTrajectories = std::map<std::string, std::vector<std::array<double, 2>>>;

}  // namespace liftlab
