// Viscous Burgers data for operator learning (docs/methods.md §8.3):
// u_t + (u²/2)_x = ν u_xx on periodic [0, 1), u0 ~ N(0, 625(−Δ + 25 I)⁻²),
// learn u0 ↦ u(·, T). Solved pseudo-spectrally on a fine grid, returned subsampled to s points.
//
// Fourier convention used throughout: c_k = (1/N) Σ_j u(x_j) e^{−2πi k j/N} (torch::fft "forward"
// norm), so u(x) = Σ_k c_k e^{2πi k x} and the sampler's E|c_k|² equals the covariance eigenvalue.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace liftlab {

struct BurgersOptions {
    explicit BurgersOptions(int64_t n_samples) : n_samples_(n_samples) {}
    TORCH_ARG(int64_t, n_samples);
    TORCH_ARG(int64_t, fine_grid) = 8192;   // solver grid N (even)
    TORCH_ARG(int64_t, resolution) = 1024;  // s: output points, must divide fine_grid
    TORCH_ARG(double, viscosity) = 0.1;     // ν
    TORCH_ARG(double, final_time) = 1.0;    // T
    // ETDRK4 step. The viscous term is integrated exactly, so the step is not limited by ν k²;
    // at ν = 0.1 (and 0.01), 1e-2 keeps the time error near 1e-6 relative for this data
    // (tests/engine/test_burgers.cpp). Much smaller ν makes the explicit nonlinear term limit the
    // step (ν = 1e-3 with this prior blew up even at dt = 5e-4 on 8192 points); a blow-up is
    // reported as an error.
    TORCH_ARG(double, time_step) = 1e-2;
    TORCH_ARG(std::uint64_t, seed) = 1234;
    // Samples solved together as one batched tensor. 50 keeps the working set (≈ 3 MB per
    // spectral array at N = 8192) cache-sized, which measured faster than 200, and bounds memory.
    // Results do not depend on it, so it is not part of the cache key.
    TORCH_ARG(int64_t, batch_chunk) = 50;
};

// Initial conditions and solutions at T on the output grid x_j = j/s: n × s, float32.
struct BurgersData {
    torch::Tensor u0;
    torch::Tensor u_final;
};

// Receives the completed fraction in [0, 1]; return false to cancel. A cancelled generation
// throws BurgersCancelled and writes nothing to the cache.
using BurgersProgress = std::function<bool(double fraction)>;

class BurgersCancelled : public std::runtime_error {
public:
    BurgersCancelled() : std::runtime_error("burgers data generation cancelled") {}
};

// λ_k = 625 / ((2πk)² + 25)²: the eigenvalue of 625(−Δ + 25 I)⁻² for the Fourier modes ±k.
double burgers_initial_variance(int64_t k);

// n initial conditions on the grid x_j = j/N (n × N, float64). Each mode 1 ≤ k < N/2 gets
// c_k = sqrt(λ_k/2)(ξ + iη) with ξ, η ~ N(0, 1), so E|c_k|² = λ_k and u0 is real. The mean
// (k = 0) is 0, as in the FNO reference data; the Nyquist mode is 0 (its sine part does not exist
// on the grid and its cosine amplitude, ~λ_{N/2}^{1/2} ≈ 4e−8 at N = 8192, is negligible).
torch::Tensor sample_burgers_initial(int64_t n, int64_t grid, std::uint64_t seed);

// Solves to time T from u0 (n × N, float64, N even, x_j = j/N) and returns u(·, T) as n × N
// float64. ETDRK4 (Cox & Matthews 2002, coefficients by Kassam & Trefethen's contour average):
// viscosity exactly, the nonlinearity −(u²/2)_x explicitly with the 2/3 rule (modes with 3k ≥ N
// neither enter the product nor receive it; they only decay, exactly). Uses ceil(T/dt) equal
// steps of T / ceil(T/dt). Fourth order on smooth data; the rough sampled u0 shows ETDRK4's
// stiff order reduction (≈ 2.5–3). The mean c_0 is untouched by every stage, so ∫u dx is
// conserved to round-off. Cost: 8 FFTs of N points per sample and step. Throws
// std::runtime_error naming ν and dt when the solution blows up (dt too large for small ν).
torch::Tensor solve_burgers(const torch::Tensor& u0, double viscosity, double final_time,
                            double time_step, const BurgersProgress& progress = {});

// Samples, solves and subsamples (every N/s-th point) n_samples pairs. Throws
// std::invalid_argument for inconsistent options, BurgersCancelled when progress says stop.
BurgersData generate_burgers(const BurgersOptions& options, const BurgersProgress& progress = {});

// The cache file for these options: cache_dir/burgers-<64-bit hash of every parameter>.pt.
std::string burgers_cache_file(const BurgersOptions& options, const std::string& cache_dir);

// Loads the data from burgers_cache_file() when it is present and valid; otherwise generates it
// and stores it (atomically: temp file + rename). An unreadable, corrupt or mismatching file is
// regenerated. The cache is best effort: a failed write still returns the data. An empty
// cache_dir disables caching.
BurgersData load_or_generate_burgers(const BurgersOptions& options, const std::string& cache_dir,
                                     const BurgersProgress& progress = {});

}  // namespace liftlab
