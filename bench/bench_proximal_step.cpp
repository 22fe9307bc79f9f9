// Cost of the closed-form proximal step relative to a plain gradient step (docs/methods.md §2.3,
// the wall-clock cost of the solve). For feature width d and batch n:
//   gradient step  forward + backward + Adam on backbone and a linear head (what `adam` does)
//   prox step      the same θ step, then a no-grad forward and the float64 proximal solve
//                  (backbone-first, the default order), with the solve forced through Cholesky
//                  (d × d) or Woodbury (n × n);
//   W-first        the solve on the features of the step's own forward, then the θ step at the
//                  new W (one forward pass; `step_order: w-first`), on the automatic path;
//   fwd, solve     the prox step's two additions alone: the no-grad forward pass, and [Φ, 1] in
//                  float64 plus the solve on the automatic path;
//   gram, chol     the solve's two float64 kernels alone (LAPACK): the Gram (ΦᵀΦ, or ΦΦᵀ on
//                  the Woodbury path) by dsyrk and its Cholesky factor by dpotrf;
//   floor/grad     (grad + fwd + gram + chol) / grad: the backbone-first prox step's ratio if
//                  everything but the forward and those two kernels cost nothing — the least
//                  this order can reach with a float64 Gram on this machine's BLAS.
// Adam is the trainers' (make_optimizer: the fused update) on both sides.
// Each cell is one JSON line (bench/bench_record.h, case "prox_vs_grad"): the times in ms
// (grad_ms, prox_cholesky_ms, prox_woodbury_ms, w_first_ms, forward_ms, solve_ms, gram_ms,
// factor_ms) and the ratios to grad_ms (cholesky_ratio, woodbury_ratio, w_first_ratio,
// floor_ratio); bench/side_by_side.sh prints them as a table.
// usage: liftlab-bench-prox THREADS [D N]   (D N: that one cell only, e.g. to profile it)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "bench_record.h"
#include "bench_timer.h"
#include "core/allocator_tuning.h"
#include "core/blas_lapack.h"
#include "core/compute_threads.h"
#include "lastlayer/proximal_solve.h"
#include "nn/mlp_backbone.h"
#include "training/optimizer_factory.h"

namespace {

// Seconds of the automatic path's two float64 kernels alone on features phi (n × d, float64,
// contiguous): the Gram by dsyrk (n × n when n < d, else d × d) and dpotrf of it plus λI.
// {0, 0} when the BLAS/LAPACK routines are not found (the solve then runs on LibTorch).
std::pair<double, double> float64_kernels(const torch::Tensor& phi) {
    const liftlab::BlasLapack* f = liftlab::blas_lapack();
    if (f == nullptr) return {0.0, 0.0};
    const int n = static_cast<int>(phi.size(0)), d = static_cast<int>(phi.size(1));
    const bool woodbury = n < d;
    const int m = woodbury ? n : d, k = woodbury ? d : n;
    const double one = 1.0, zero = 0.0;
    const double* p = phi.data_ptr<double>();
    std::vector<double> gram(static_cast<size_t>(m) * m), factor(gram.size());
    const auto syrk = [&] {
        f->dsyrk("L", woodbury ? "T" : "N", &m, &k, &one, p, &d, &zero, gram.data(), &m, 1, 1);
    };
    const int calls = 50;
    const double t_gram = liftlab::bench::median_seconds_per_call(syrk, calls, 5, 5);
    for (int i = 0; i < m; ++i) gram[static_cast<size_t>(i) * m + i] += 1.0;
    int info = 0;
    const auto copy = [&] { std::copy(gram.begin(), gram.end(), factor.begin()); };
    const double t_copy = liftlab::bench::median_seconds_per_call(copy, calls, 5, 5);
    const double t_both = liftlab::bench::median_seconds_per_call(
        [&] {
            copy();
            f->dpotrf("L", &m, factor.data(), &m, &info, 1);
        },
        calls, 5, 5);
    return {t_gram, std::max(0.0, t_both - t_copy)};
}

}  // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    liftlab::tune_allocator();
    liftlab::set_compute_threads(threads);  // torch and OpenBLAS
    torch::manual_seed(0);
    constexpr int64_t kInput = 16, kOutputs = 4, kHidden = 128;
    constexpr double kLambda = 1.0;
    std::vector<int64_t> widths{64, 256, 1024}, batches{16, 128};
    if (argc > 3) {
        widths = {std::atoll(argv[2])};
        batches = {std::atoll(argv[3])};
    }
    for (int64_t d : widths) {
        for (int64_t n : batches) {
            liftlab::MlpBackbone net(
                liftlab::MlpBackboneOptions(kInput, d).hidden({kHidden, kHidden}));
            torch::nn::Linear head(d, kOutputs);
            auto params = net->parameters();
            for (auto& p : head->parameters()) params.push_back(p);
            auto adam = liftlab::make_optimizer("adam", 1e-3, 0.0, params);
            auto adam_backbone = liftlab::make_optimizer("adam", 1e-3, 0.0, net->parameters());
            auto x = torch::randn({n, kInput});
            auto y = torch::randn({n, kOutputs});
            auto w = torch::zeros({d + 1, kOutputs}, torch::kFloat64);

            auto grad_step = [&] {
                adam->zero_grad();
                auto loss = torch::mse_loss(head->forward(net->forward(x)), y);
                loss.backward();
                adam->step();
            };
            auto prox_step = [&](liftlab::SolvePath path) {
                adam_backbone->zero_grad();
                auto wf = w.to(torch::kFloat32);
                auto feats = net->forward(x);
                auto loss = torch::mse_loss(torch::addmm(wf[d], feats, wf.narrow(0, 0, d)), y);
                loss.backward();
                adam_backbone->step();
                torch::NoGradGuard g;
                w = liftlab::solve_proximal(liftlab::bias_column_f64(net->forward(x)), y, kLambda,
                                            w, path)
                        .w;
            };
            auto w_first_step = [&] {
                adam_backbone->zero_grad();
                auto feats = net->forward(x);
                w = liftlab::solve_proximal(liftlab::bias_column_f64(feats), y, kLambda, w).w;
                auto wf = w.to(torch::kFloat32);
                auto loss = torch::mse_loss(torch::addmm(wf[d], feats, wf.narrow(0, 0, d)), y);
                loss.backward();
                adam_backbone->step();
            };
            const int calls = d >= 1024 ? 20 : 100;
            // Measured first and again last (the better of the two): the first timing of a
            // freshly built network otherwise carries its page faults and cold caches.
            double g = liftlab::bench::median_seconds_per_call(grad_step, calls, 5, 10);
            const double c = liftlab::bench::median_seconds_per_call(
                [&] { prox_step(liftlab::SolvePath::Cholesky); }, calls, 5, 10);
            const double wb = liftlab::bench::median_seconds_per_call(
                [&] { prox_step(liftlab::SolvePath::Woodbury); }, calls, 5, 10);
            const double wfirst =
                liftlab::bench::median_seconds_per_call(w_first_step, calls, 5, 10);
            g = std::min(g, liftlab::bench::median_seconds_per_call(grad_step, calls, 5, 10));
            // Where the prox step's extra time goes: the no-grad forward and the solve alone.
            const double fwd = liftlab::bench::median_seconds_per_call(
                [&] {
                    torch::NoGradGuard ng;
                    (void)net->forward(x);
                },
                calls, 5, 10);
            torch::Tensor feats_now;
            {
                torch::NoGradGuard ng;
                feats_now = net->forward(x);
            }
            const double solve = liftlab::bench::median_seconds_per_call(
                [&] {
                    torch::NoGradGuard ng;
                    (void)liftlab::solve_proximal(liftlab::bias_column_f64(feats_now), y, kLambda,
                                                  w, liftlab::SolvePath::Automatic);
                },
                calls, 5, 10);

            const auto [gram, chol] = float64_kernels(liftlab::bias_column_f64(feats_now));

            liftlab::bench::print_record("liftlab-bench-prox", "prox_vs_grad", "cf-prox", threads,
                                         {{"d", d},
                                          {"n", n},
                                          {"input", kInput},
                                          {"hidden", kHidden},
                                          {"outputs", kOutputs},
                                          {"lambda", kLambda}},
                                         {{"grad_ms", 1e3 * g},
                                          {"prox_cholesky_ms", 1e3 * c},
                                          {"prox_woodbury_ms", 1e3 * wb},
                                          {"w_first_ms", 1e3 * wfirst},
                                          {"cholesky_ratio", c / g},
                                          {"woodbury_ratio", wb / g},
                                          {"w_first_ratio", wfirst / g},
                                          {"forward_ms", 1e3 * fwd},
                                          {"solve_ms", 1e3 * solve},
                                          {"gram_ms", 1e3 * gram},
                                          {"factor_ms", 1e3 * chol},
                                          {"floor_ratio", (g + fwd + gram + chol) / g}});
        }
    }
    return 0;
}
