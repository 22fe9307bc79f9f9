// 2-D toy data for convex potential flows (docs/methods.md §8.8),
// following the FFJORD/CP-Flow `toy_data` recipes. Seeded, shape {n, 2}, float64.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace liftlab {

// Reading of "centres (±1,0), (0,±1), (±1/√2, ±1/√2) × 4, plus N(0, 0.5²), all / 1.414":
// "× 4" is the scale of the centres (the reference's `scale = 4`), not a count. Each sample picks
// one of the 8 unit-circle centres c uniformly, then x = (4c + 0.5 ε) / 1.414 with ε ~ N(0, I₂).
// So the modes sit on a circle of radius 4/1.414 ≈ 2.83 with per-coordinate std 0.5/1.414.
torch::Tensor make_eight_gaussians(int64_t n, uint64_t seed);

// The 8 centres after scaling, 4c / 1.414, shape {8, 2}, float64.
torch::Tensor eight_gaussians_centres();

// Reading of "n = √U·540·2π/360, x = (−cos n · n + 0.5U₁, sin n · n + 0.5U₂), stacked with its
// negation, / 3, plus N(0, 0.1²)": U, U₁, U₂ ~ U(0,1) independent (so 0.5U₁ ~ U(0, 0.5)); one
// arm a_i is drawn, the data are [a; −a] / 3, and the N(0, 0.1²) noise is added AFTER the /3
// (as in the reference), independently to every coordinate of every row. For odd n the arm has
// ⌈n/2⌉ rows and the last negated row is dropped; rows i and i + ⌈n/2⌉ are mirror pairs.
torch::Tensor make_two_spirals(int64_t n, uint64_t seed);

// The scaling of the reference's 2-D CP-Flow sweep (luqigroup/lift
// `scripts/experiments_cpflow_demo_2d_f1.py`, targets `8gaussians-demo` and `2spirals-demo`),
// which differs from the FFJORD recipe above. 8-Gaussians: centres 2·(cos 2πk/8, sin 2πk/8),
// k = 0 … 7 uniform, plus N(0, 0.1² I), no divisor.
torch::Tensor make_eight_gaussians_demo(int64_t n, uint64_t seed);
// The 8 centres of make_eight_gaussians_demo, shape {8, 2}, float64.
torch::Tensor eight_gaussians_demo_centres();
// 2-spirals: t = √U · 3π (540°), radius r = t + π, one arm (−r cos t, r sin t) of ⌈n/2⌉ rows
// stacked with its negation (the last negated row dropped for odd n), then N(0, 0.1²) added to
// every coordinate BEFORE the division by 3 (the noise sd is 0.1/3 in the data's units); no
// uniform jitter.
torch::Tensor make_two_spirals_demo(int64_t n, uint64_t seed);

}  // namespace liftlab
