// Landscape figures of an ICNN run: θ-space beside lifted space (LandscapePanel), from
// run_landscape (engine), computed or read from the run folder's cache.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

// No engine header here: it is included next to Qt headers (torch and Qt's `slots` collide).
namespace liftlab {
struct RunLandscape;
}

namespace liftlab::cli {

struct LandscapeFigureArgs {
    std::string run_dir;
    std::string method;                   // "" = the spec's first method with a trajectory
    int64_t seed = -1;                    // -1 = the spec's first seed
    int grid = 0;                         // 0 = 41 (θ) / 25 (lifted)
    int grid_theta = 0, grid_lifted = 0;  // per space, when set (cached grids)
    std::string space = "both";           // theta | lifted | both
    std::string directions = "pca";       // random | pca | delta-pca
    uint64_t direction_seed = 0;
    std::string format = "png";
    bool cached_only = false;  // report: draw what is cached, compute nothing
};

// Computes (or loads) the landscapes and writes figures/landscape_<kind>_<method>_seed<k>.<fmt>;
// returns the written figure ("" when cached_only found nothing). `progress` as in
// compute_landscape; a cancelled computation throws LandscapeCancelled.
std::string render_landscape_figure(const LandscapeFigureArgs& args,
                                    const std::function<bool(double)>& progress = {},
                                    std::vector<RunLandscape>* results = nullptr);

// Every (method, seed, kind) with a cached landscape in <run>/landscapes, as figure arguments.
std::vector<LandscapeFigureArgs> cached_landscapes(const std::string& run_dir);

int command_landscape(const LandscapeFigureArgs& args);

}  // namespace liftlab::cli
