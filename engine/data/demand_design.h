// The demand design of Hartford et al. 2017 (DeepIV), the Deep Feature Instrumental Variables
// task of docs/methods.md §8.4. Price P is endogenous: its noise V also drives the outcome
// noise e through ρ, so regressing Y on P is biased; the fuel-cost shock C is the instrument.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace liftlab {

// All tensors are float64 (the two-stage ridge solves accumulate in float64 anyway); callers cast.
struct DemandData {
    torch::Tensor treatment;    // P, n × 1
    torch::Tensor covariates;   // (t, s), n × 2
    torch::Tensor instruments;  // (C, t, s), n × 3
    torch::Tensor outcome;      // Y = f(P, t, s) + e, n × 1
    torch::Tensor structural;   // f(P, t, s), n × 1: the noise-free target
};

// The test grid: every (p, t, s) with p in linspace(10, 25, 20), t in linspace(0, 10, 20),
// s in 1..7 — 2800 rows, ordered with p slowest and s fastest. float64.
struct DemandGrid {
    torch::Tensor treatment;   // p, 2800 × 1
    torch::Tensor covariates;  // (t, s), 2800 × 2
    torch::Tensor structural;  // f(p, t, s), 2800 × 1
};

// ψ(t) = 2((t−5)⁴/600 + exp(−4(t−5)²) + t/10 − 2).
double demand_psi(double t);
// f(p, t, s) = 100 + (10 + p) s ψ(t) − 2p.
double demand_structural(double p, double t, double s);
// Elementwise versions (broadcasting), in the dtype of the arguments.
torch::Tensor demand_psi(const torch::Tensor& t);
torch::Tensor demand_structural(const torch::Tensor& p, const torch::Tensor& t,
                                const torch::Tensor& s);

// n samples of s ~ Unif{1..7}, t ~ U(0, 10), C, V ~ N(0, 1), e = ρV + N(0, 1 − ρ²) (variance
// 1 − ρ², so e ~ N(0, 1) and corr(e, V) = ρ), P = 25 + (C + 3) ψ(t) + V, Y = f(P, t, s) + e.
// Deterministic in `seed` (draw order s, t, C, V, then the independent part of e). Throws
// std::invalid_argument unless n > 0 and −1 ≤ ρ ≤ 1.
DemandData make_demand_design(int64_t n, double rho, std::uint64_t seed);

DemandGrid demand_test_grid();

}  // namespace liftlab
