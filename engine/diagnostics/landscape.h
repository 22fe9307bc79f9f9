// Loss landscapes (docs/methods.md §7; Li et al. 2018, "Visualizing the Loss
// Landscape of Neural Nets"): the loss on the plane p* + α d1 + β d2 through a centre p*, evaluated
// on a grid.
//
// Everything works on FLAT float64 parameter vectors of length P (inputs of other dtypes are
// converted); what the parameters mean is the caller's business: the loss is a batched functor that
// maps a C × P matrix of parameter vectors to C losses. The same code serves θ-space (the effective
// constrained weights) and the lifted space (Θ_E, b, φ).
//
// Directions:
//   "random"    Gaussian, filter-normalised: each filter of a direction is rescaled to the norm of
//               the same filter of the centre (Li et al. §4). Seeded, so every method of a run can
//               share one plane.
//   "pca"       top-2 principal directions of a trajectory (T × P, T ≪ P) around its mean, via the
//               T × T Gram matrix.
//   "delta-pca" d1 = (last − first)/‖last − first‖, d2 = top principal direction of the trajectory
//               with its d1 component removed.
// A trajectory is placed on the plane by least squares (the plane need not contain it).
//
// Memory: a batch of C cells is one C × P float64 matrix (8·C·P bytes), so pick `cells_per_batch`
// with P in mind (P = 3·10⁶ and C = 64 is 1.5 GB). Trajectory routines stream over column blocks
// and allocate O(T² + P) beyond the trajectory itself.
#pragma once
#include <torch/torch.h>

#include "diagnostics/landscape_types.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace liftlab {

// How a flat vector splits into tensors, in order (for filter normalisation). A "filter" is one row
// (first index) of a tensor with dim ≥ 2; a 1-D tensor (a bias, a slack vector) is ONE filter, and
// so is a scalar (shape {}).
struct ParameterLayout {
    std::vector<std::vector<int64_t>> shapes;
    int64_t numel() const;
};

// d1, d2: flat float64, length P. kind: "random", "pca" or "delta-pca".
struct PlaneDirections {
    std::string kind;
    torch::Tensor d1, d2;
};

// kind "random": d1 then d2 drawn N(0, 1) from a CPU generator seeded with `seed`, then every
// filter rescaled to the norm of the same filter of `center`; a zero filter of the centre gives a
// zero direction there. Same seed + same layout + same centre → identical directions. Throws
// std::invalid_argument when center is not 1-D or layout.numel() ≠ P.
PlaneDirections random_filter_normalised_directions(const torch::Tensor& center,
                                                    const ParameterLayout& layout, uint64_t seed);

// kind "pca": top-2 principal directions of `trajectory` (T × P) around its mean, orthonormal, each
// with the sign that makes its largest-|entry| positive. When the trajectory spans only a line
// (second variance ≤ 1e-12 × the first, e.g. T = 2), d2 is completed by a fixed-seed Gaussian
// vector made orthogonal to d1, so the plane still contains the trajectory. Throws
// std::invalid_argument for T < 2, P < 2, or all rows equal.
PlaneDirections pca_directions(const torch::Tensor& trajectory);

// kind "delta-pca": d1 = (last − first)/‖last − first‖ (its sign follows last − first), d2 = the
// top principal direction of the centred trajectory with its d1 component removed, made exactly
// orthogonal to d1, unit norm, largest-|entry| positive. A trajectory on a line gets the same
// fixed-seed completion as pca_directions. Throws std::invalid_argument for T < 2, P < 2, or
// last == first.
PlaneDirections delta_pca_directions(const torch::Tensor& trajectory);

// Least-squares coordinates (α, β) of each row r of `trajectory` (T × P) in
// r ≈ center + α d1 + β d2, as a T × 2 float64 tensor. d1, d2 need not be orthogonal (solved
// through a QR factorisation of [d1 d2], which is better conditioned than the normal equations). If
// `relative_residual` is given it receives, per row, ‖r − center − α d1 − β d2‖ / ‖r − center‖
// (0 for r = center). Throws std::invalid_argument for mismatched P or linearly dependent d1, d2.
torch::Tensor project_onto_plane(const torch::Tensor& trajectory, const torch::Tensor& center,
                                 const PlaneDirections& dirs,
                                 torch::Tensor* relative_residual = nullptr);

// Per axis: the interval spanned by the projected points and the origin (the centre of the plane),
// widened by `margin` × its span on each side, then widened symmetrically to a half-width of at
// least `min_half_width`. coords: T × 2 (T may be 0), finite. Throws std::invalid_argument for bad
// shapes, non-finite coordinates, margin < 0 or min_half_width ≤ 0.
LandscapeRange range_covering(const torch::Tensor& coords, double margin = 0.25,
                              double min_half_width = 1.0);

using BatchLoss = std::function<torch::Tensor(const torch::Tensor& params)>;  // C × P → C losses

// loss(center + α d1 + β d2) on an n_alpha × n_beta grid over `range` (endpoints included). Cells
// go in row-major order (α fastest) in batches of at most `cells_per_batch`, each one C × P matrix
// passed to `loss` (called ceil(n_alpha n_beta / cells_per_batch) times, under the caller's grad
// mode); `progress` receives the fraction of cells done after each batch (the last call gets
// exactly 1) and cancels with false: LandscapeCancelled is thrown and nothing partial is returned.
// Throws std::invalid_argument for mismatched P, a grid side < 2, cells_per_batch < 1, an empty or
// non-finite range, or a loss that returns the wrong number of values.
LandscapeGrid compute_landscape(const torch::Tensor& center, const PlaneDirections& dirs,
                                const LandscapeRange& range, int n_alpha, int n_beta,
                                const BatchLoss& loss, int cells_per_batch = 64,
                                const LandscapeProgress& progress = {});

// Cache key: 16 lowercase hex digits, FNV-1a 64 over a format tag, the bytes of center, d1, d2 (as
// contiguous float64), the directions' kind, the range, the grid size and the caller's `tag` (e.g.
// "theta" or "lifted"; include whatever else identifies the loss, such as the run and the step).
std::string landscape_cache_key(const torch::Tensor& center, const PlaneDirections& dirs,
                                const LandscapeRange& range, int n_alpha, int n_beta,
                                const std::string& tag);

// JSON file {format, version, key, direction_kind, n_alpha, n_beta, range, loss (NaN as null),
// trajectories: {label: [[α, β], ...]}}, written atomically (temporary file + rename); the parent
// folder is created. Doubles round-trip bit for bit. Throws std::invalid_argument for a grid whose
// loss size is not n_alpha × n_beta.
void save_landscape(const std::string& path, const std::string& key, const LandscapeGrid& grid,
                    const std::string& direction_kind, const PlaneTrajectories& trajectories);

// Returns false, leaving the outputs untouched, when the file is missing or holds a different key.
// Throws DataError (outputs untouched) for a file that is not a valid landscape file.
bool load_landscape(const std::string& path, const std::string& key, LandscapeGrid& grid,
                    PlaneTrajectories& trajectories, std::string* direction_kind = nullptr);

}  // namespace liftlab
