// Loss landscapes: plane projections, PCA / delta-PCA / filter-normalised directions, batched grid
// evaluation and the cache file, checked against constructed planes, an SVD reference and a
// quadratic loss with a closed form.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include "core/errors.h"
#include "diagnostics/landscape.h"
#include "test_helpers.h"

namespace {
namespace fs = std::filesystem;
using liftlab::PlaneDirections;
using torch::Tensor;

using liftlab::test::kF64;

double max_abs(const Tensor& t) {
    return t.abs().max().item<double>();
}
double dot_value(const Tensor& a, const Tensor& b) {
    return a.dot(b).item<double>();
}

// center + a_t u + b_t v for coefficient rows (a_t, b_t).
Tensor planar(const Tensor& center, const Tensor& u, const Tensor& v, const Tensor& coef) {
    return center.unsqueeze(0) + coef.select(1, 0).unsqueeze(1) * u.unsqueeze(0) +
           coef.select(1, 1).unsqueeze(1) * v.unsqueeze(0);
}

// Runs f and expects std::invalid_argument whose message contains `name`.
template <class F>
void expect_invalid(F&& f, const std::string& name) {
    try {
        f();
        ADD_FAILURE() << "expected std::invalid_argument naming '" << name << "'";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
}

// Top-k right singular vectors of a small matrix: an independent reference for the Gram trick.
Tensor right_singular(const Tensor& x, int64_t k) {
    auto vh = std::get<2>(torch::linalg_svd(x, /*full_matrices=*/false));
    return vh.narrow(0, 0, k);
}

// ‖a − s b‖ minimised over the sign s: the distance between two lines' unit vectors.
double sign_free_distance(const Tensor& a, const Tensor& b) {
    return std::min((a - b).norm().item<double>(), (a + b).norm().item<double>());
}

class LandscapeTempDir {
public:
    LandscapeTempDir() {
        std::random_device rd;
        path_ = fs::temp_directory_path() / ("liftlab-landscape-" + std::to_string(rd()));
        fs::create_directories(path_);
    }
    ~LandscapeTempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};
}  // namespace

// ---------------------------------------------------------------- projection

TEST(LandscapeProjection, RecoversCoordinatesOfPlanarTrajectory) {
    torch::manual_seed(31);
    const int64_t p = 500, t = 30;
    auto center = torch::randn({p}, kF64);
    auto u = torch::randn({p}, kF64);
    auto v = 0.8 * u + 0.3 * torch::randn({p}, kF64);  // cos(u, v) ≈ 0.94: far from orthogonal
    auto coef = 3 * torch::randn({t, 2}, kF64);
    auto traj = planar(center, u, v, coef);
    Tensor residual;
    auto got = liftlab::project_onto_plane(traj, center, PlaneDirections{"test", u, v}, &residual);
    ASSERT_EQ(got.sizes(), (std::vector<int64_t>{t, 2}));
    // Coordinates O(3), cond([u v]) ≈ 6: rounding gives ~1e-14; 1e-10 is the required accuracy.
    EXPECT_LT(max_abs(got - coef), 1e-10);
    EXPECT_LT(max_abs(residual), 1e-12);  // exact plane: residual is rounding only
}

TEST(LandscapeProjection, OffPlaneComponentGoesToTheResidual) {
    // Add e_t w with unit w ⟂ span(u, v): the least-squares coordinates are unchanged and the
    // relative residual is |e_t| / sqrt(‖a_t u + b_t v‖² + e_t²) (Pythagoras).
    torch::manual_seed(32);
    const int64_t p = 400, t = 12;
    auto center = torch::randn({p}, kF64);
    auto u = torch::randn({p}, kF64), v = torch::randn({p}, kF64) + 0.5 * u;
    auto q = std::get<0>(torch::linalg_qr(torch::stack({u, v, torch::randn({p}, kF64)}, 1)));
    auto w = q.select(1, 2);  // unit, orthogonal to u and v
    auto coef = torch::randn({t, 2}, kF64);
    auto e = torch::randn({t}, kF64);
    auto in_plane = planar(torch::zeros({p}, kF64), u, v, coef);
    auto traj = center + in_plane + e.unsqueeze(1) * w.unsqueeze(0);
    Tensor residual;
    auto got = liftlab::project_onto_plane(traj, center, PlaneDirections{"test", u, v}, &residual);
    EXPECT_LT(max_abs(got - coef), 1e-10);  // as above: rounding level ~1e-14
    auto expected = e.abs() / (in_plane.pow(2).sum(1) + e.pow(2)).sqrt();
    EXPECT_LT(max_abs(residual - expected), 1e-10);
    // The centre itself projects to the origin with residual 0 (defined, not 0/0).
    auto at_center = liftlab::project_onto_plane(center.unsqueeze(0), center,
                                                 PlaneDirections{"test", u, v}, &residual);
    EXPECT_LT(max_abs(at_center), 1e-12);
    EXPECT_EQ(residual.item<double>(), 0.0);
}

TEST(LandscapeProjection, RejectsBadShapesAndDependentDirections) {
    torch::manual_seed(33);
    auto c = torch::randn({10}, kF64), u = torch::randn({10}, kF64);
    auto traj = torch::randn({4, 10}, kF64);
    expect_invalid(
        [&] {
            liftlab::project_onto_plane(traj, c, {"t", u, 2 * u});
        },
        "linearly dependent");
    expect_invalid(
        [&] {
            liftlab::project_onto_plane(traj, torch::randn({9}, kF64), {"t", u, c});
        },
        "center");
    expect_invalid(
        [&] {
            liftlab::project_onto_plane(traj, c, {"t", u, torch::randn({11}, kF64)});
        },
        "dirs.d2");
    expect_invalid([&] { liftlab::project_onto_plane(c, c, {"t", u, c}); }, "trajectory");
}

// ---------------------------------------------------------------- PCA directions

TEST(LandscapePca, PlanarTrajectoryWithKnownAxes) {
    // X = 3 a uᵀ + 1 b vᵀ with orthonormal u, v and orthonormal zero-mean a, b is an SVD with
    // σ = 3, 1: the principal directions are exactly ±u, ±v.
    torch::manual_seed(34);
    const int64_t p = 500, t = 40;
    auto uv = std::get<0>(torch::linalg_qr(torch::randn({p, 2}, kF64)));
    auto m = torch::randn({t, 2}, kF64);
    auto ab = std::get<0>(torch::linalg_qr(m - m.mean(0, true)));  // columns zero-mean, orthonormal
    auto coef = torch::stack({3 * ab.select(1, 0), ab.select(1, 1)}, 1);
    auto center = torch::randn({p}, kF64);
    auto traj = planar(center, uv.select(1, 0), uv.select(1, 1), coef);
    auto d = liftlab::pca_directions(traj);
    EXPECT_EQ(d.kind, "pca");
    // Eigenvector error of the Gram matrix ~ ε λ1/(λ1 − λ2) ≈ 1e-16: 1e-10 leaves a wide margin.
    EXPECT_LT(sign_free_distance(d.d1, uv.select(1, 0)), 1e-10);
    EXPECT_LT(sign_free_distance(d.d2, uv.select(1, 1)), 1e-10);
    EXPECT_NEAR(d.d1.norm().item<double>(), 1.0, 1e-12);  // orthonormal to rounding
    EXPECT_NEAR(d.d2.norm().item<double>(), 1.0, 1e-12);
    EXPECT_LT(std::abs(dot_value(d.d1, d.d2)), 1e-12);
    for (const auto& v : {d.d1, d.d2}) {  // sign convention: largest-|entry| positive
        EXPECT_GT(v[v.abs().argmax().item<int64_t>()].item<double>(), 0);
    }
}

TEST(LandscapePca, SpansAGeneralPlaneAndIsOrthonormal) {
    torch::manual_seed(35);
    const int64_t p = 500, t = 25;
    auto center = torch::randn({p}, kF64);
    auto u = torch::randn({p}, kF64), v = 0.7 * u + torch::randn({p}, kF64);
    auto traj = planar(center, u, v, torch::randn({t, 2}, kF64).cumsum(0));
    auto d = liftlab::pca_directions(traj);
    Tensor residual;
    liftlab::project_onto_plane(traj, traj[0], d, &residual);
    EXPECT_LT(max_abs(residual), 1e-10);  // the plane contains every row, up to rounding
    EXPECT_NEAR(d.d1.norm().item<double>(), 1.0, 1e-12);
    EXPECT_NEAR(d.d2.norm().item<double>(), 1.0, 1e-12);
    EXPECT_LT(std::abs(dot_value(d.d1, d.d2)), 1e-12);
}

TEST(LandscapePca, MatchesSvdOfCentredTrajectory) {
    // A random walk in P = 300 (not planar): the Gram trick must give the top-2 right singular
    // vectors of the centred matrix. Random-walk spectra are well separated (σ1²/σ2² ≈ 4), so the
    // eigenvector error is ~1e-15; tolerance 1e-9.
    torch::manual_seed(36);
    auto traj = torch::randn({30, 300}, kF64).cumsum(0);
    auto d = liftlab::pca_directions(traj);
    auto ref = right_singular(traj - traj.mean(0, true), 2);
    EXPECT_LT(sign_free_distance(d.d1, ref[0]), 1e-9);
    EXPECT_LT(sign_free_distance(d.d2, ref[1]), 1e-9);
}

TEST(LandscapePca, SignIsDeterministicUnderReflectionAndRowOrder) {
    // PCA depends only on the set of centred rows up to sign; the sign rule removes the sign, so a
    // reflected trajectory (2c − r) and a row permutation give the same directions.
    torch::manual_seed(37);
    auto traj = torch::randn({20, 200}, kF64).cumsum(0);
    auto d = liftlab::pca_directions(traj);
    auto reflected = liftlab::pca_directions(2 * traj.mean(0, true) - traj);
    auto shuffled = liftlab::pca_directions(traj.index_select(0, torch::randperm(20)));
    for (const auto& other : {reflected, shuffled}) {
        EXPECT_LT(max_abs(other.d1 - d.d1), 1e-10);  // not bit-equal: summation order differs
        EXPECT_LT(max_abs(other.d2 - d.d2), 1e-10);
    }
}

TEST(LandscapePca, LineTrajectoryIsCompletedToAPlane) {
    // T = 2 (or collinear rows): one principal direction only. d1 ∥ last − first, d2 is a
    // reproducible unit completion orthogonal to it, and the rows still lie on the plane.
    torch::manual_seed(38);
    auto traj = torch::randn({2, 50}, kF64);
    auto d = liftlab::pca_directions(traj);
    auto delta = traj[1] - traj[0];
    EXPECT_LT(sign_free_distance(d.d1, delta / delta.norm()), 1e-12);
    EXPECT_NEAR(d.d2.norm().item<double>(), 1.0, 1e-12);
    EXPECT_LT(std::abs(dot_value(d.d1, d.d2)), 1e-12);
    Tensor residual;
    liftlab::project_onto_plane(traj, traj[0], d, &residual);
    EXPECT_LT(max_abs(residual), 1e-12);
    EXPECT_TRUE(torch::equal(liftlab::pca_directions(traj).d2, d.d2));  // fixed-seed completion
}

TEST(LandscapePca, RejectsDegenerateInput) {
    expect_invalid([] { liftlab::pca_directions(torch::ones({1, 10}, kF64)); }, "trajectory");
    expect_invalid([] { liftlab::pca_directions(torch::ones({5, 10}, kF64)); }, "all equal");
    // Equal rows whose mean does not round back to the row ((0.1 + 0.1 + 0.1)/3 ≠ 0.1): rejected,
    // not turned into directions of rounding noise.
    expect_invalid(
        [] {
            liftlab::pca_directions(torch::full({3, 10}, 0.1, kF64) * torch::arange(1, 11, kF64));
        },
        "all equal");
    expect_invalid([] { liftlab::pca_directions(torch::ones({10}, kF64)); }, "trajectory");
    expect_invalid([] { liftlab::pca_directions(torch::randn({5, 1}, kF64)); }, "P = 1");
}

TEST(LandscapePca, LargeTrajectoryIsFastAndExact) {
    // PCA and delta-PCA at P = 200 000, T = 50 (the lifted space is ~3·10⁶): the Gram trick costs
    // O(T² P) (≈ 0.1 s on an idle core); a P × P method would need 320 GB. The time is printed,
    // not asserted tightly — wall time on a shared CI machine is no measurement (benchmarks are in
    // bench/); the bound below only catches an algorithm of the wrong order. Exactness without a P
    // × P reference: d is an eigenvector of XᵀX iff XᵀX d ∥ d, checked with two matrix–vector
    // products; tolerance 1e-8 relative (rounding ~1e-13 at this size).
    torch::manual_seed(39);
    const int64_t p = 200000, t = 50;
    auto traj = torch::randn({t, p}, kF64).cumsum(0);
    const auto start = std::chrono::steady_clock::now();
    auto d = liftlab::pca_directions(traj);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[ timing   ] pca_directions P = %lld, T = %lld: %.3f s\n",
                static_cast<long long>(p), static_cast<long long>(t), seconds);
    EXPECT_LT(seconds, 60.0);

    auto mean = traj.mean(0);
    auto xtx = [&](const Tensor& v) {  // (traj − 1 meanᵀ)ᵀ (traj − 1 meanᵀ) v without forming X
        auto y = traj.matmul(v) - dot_value(mean, v);
        return traj.t().matmul(y) - y.sum().item<double>() * mean;
    };
    double previous = std::numeric_limits<double>::infinity();
    for (const auto& v : {d.d1, d.d2}) {
        auto z = xtx(v);
        const double lambda = dot_value(z, v);
        EXPECT_LT((z - lambda * v).norm().item<double>(), 1e-8 * z.norm().item<double>());
        EXPECT_LT(lambda, previous);  // ordered: top first
        previous = lambda;
    }
    EXPECT_LT(std::abs(dot_value(d.d1, d.d2)), 1e-12);

    // delta-PCA at the same size: d2 is an eigenvector of the deflated (I − d1d1ᵀ) XᵀX (I − d1d1ᵀ).
    const auto start_delta = std::chrono::steady_clock::now();
    auto e = liftlab::delta_pca_directions(traj);
    const double seconds_delta =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_delta).count();
    std::printf("[ timing   ] delta_pca_directions P = %lld, T = %lld: %.3f s\n",
                static_cast<long long>(p), static_cast<long long>(t), seconds_delta);
    EXPECT_LT(seconds_delta, 60.0);
    auto z = xtx(e.d2);
    z = z - dot_value(z, e.d1) * e.d1;
    EXPECT_LT((z - dot_value(z, e.d2) * e.d2).norm().item<double>(),
              1e-8 * z.norm().item<double>());  // as above
    EXPECT_LT(std::abs(dot_value(e.d1, e.d2)), 1e-12);
}

// ---------------------------------------------------------------- delta-PCA directions

TEST(LandscapeDeltaPca, FirstAlongDisplacementSecondOrthogonalTopComponent) {
    torch::manual_seed(40);
    auto traj = torch::randn({25, 300}, kF64).cumsum(0);
    auto d = liftlab::delta_pca_directions(traj);
    EXPECT_EQ(d.kind, "delta-pca");
    auto delta = traj[24] - traj[0];
    EXPECT_LT(max_abs(d.d1 - delta / delta.norm()), 1e-14);  // same sign as last − first
    EXPECT_NEAR(d.d2.norm().item<double>(), 1.0, 1e-12);
    EXPECT_LT(std::abs(dot_value(d.d1, d.d2)), 1e-12);
    // Reference: top right singular vector of the centred rows with their d1 component removed.
    auto x = traj - traj.mean(0, true);
    x = x - x.matmul(d.d1).unsqueeze(1) * d.d1.unsqueeze(0);
    EXPECT_LT(sign_free_distance(d.d2, right_singular(x, 1)[0]), 1e-9);  // as in the PCA test
    EXPECT_GT(d.d2[d.d2.abs().argmax().item<int64_t>()].item<double>(), 0);
}

TEST(LandscapeDeltaPca, PlanarTrajectoryLiesOnThePlane) {
    torch::manual_seed(41);
    const int64_t p = 500;
    auto center = torch::randn({p}, kF64);
    auto u = torch::randn({p}, kF64), v = torch::randn({p}, kF64) - 0.4 * u;
    auto traj = planar(center, u, v, torch::randn({20, 2}, kF64).cumsum(0));
    auto d = liftlab::delta_pca_directions(traj);
    Tensor residual;
    liftlab::project_onto_plane(traj, traj[0], d, &residual);
    EXPECT_LT(max_abs(residual), 1e-10);  // rounding only
}

TEST(LandscapeDeltaPca, RejectsZeroDeltaAndShortTrajectories) {
    torch::manual_seed(42);
    auto traj = torch::randn({5, 20}, kF64);
    traj[4] = traj[0];  // moves in between but ends where it started
    expect_invalid([&] { liftlab::delta_pca_directions(traj); }, "zero delta");
    expect_invalid(
        [] {
            liftlab::delta_pca_directions(torch::randn({1, 20}, kF64));
        },
        "trajectory");
    // T = 2: d2 is the orthogonal completion (the centred residual is zero).
    auto two = torch::randn({2, 20}, kF64);
    auto d = liftlab::delta_pca_directions(two);
    EXPECT_LT(std::abs(dot_value(d.d1, d.d2)), 1e-12);
    EXPECT_NEAR(d.d2.norm().item<double>(), 1.0, 1e-12);
}

// ---------------------------------------------------------------- random directions

TEST(LandscapeRandomDirections, FilterNormsMatchCentreAndSeedIsDeterministic) {
    torch::manual_seed(43);
    // Conv-like 4×3×2 (4 filters of 6), a bias (one filter of 4), a scalar, a 5×6 matrix (5 rows).
    liftlab::ParameterLayout layout{{{4, 3, 2}, {4}, {}, {5, 6}}};
    ASSERT_EQ(layout.numel(), 59);
    std::vector<std::pair<int64_t, int64_t>> filters;  // (offset, length), built by hand
    for (int i = 0; i < 4; ++i) filters.push_back({6 * i, 6});
    filters.push_back({24, 4});
    filters.push_back({28, 1});
    for (int i = 0; i < 5; ++i) filters.push_back({29 + 6 * i, 6});

    auto center = torch::randn({59}, kF64) * torch::linspace(0.1, 10, 59, kF64);
    center.narrow(0, 29 + 12, 6).zero_();  // row 2 of the matrix: a zero filter
    auto d = liftlab::random_filter_normalised_directions(center, layout, 7);
    EXPECT_EQ(d.kind, "random");
    for (const auto& dir : {d.d1, d.d2}) {
        ASSERT_EQ(dir.numel(), 59);
        for (auto [off, len] : filters) {
            const double cn = center.narrow(0, off, len).norm().item<double>();
            const double dn = dir.narrow(0, off, len).norm().item<double>();
            if (cn == 0) {
                EXPECT_EQ(max_abs(dir.narrow(0, off, len)), 0.0) << "zero filter at " << off;
            } else {
                EXPECT_NEAR(dn, cn, 1e-12 * cn) << "filter at " << off;  // rescaling to rounding
            }
        }
    }
    auto same = liftlab::random_filter_normalised_directions(center, layout, 7);
    auto other = liftlab::random_filter_normalised_directions(center, layout, 8);
    EXPECT_TRUE(torch::equal(same.d1, d.d1));
    EXPECT_TRUE(torch::equal(same.d2, d.d2));
    EXPECT_GT(max_abs(other.d1 - d.d1), 0.1);
    EXPECT_GT(max_abs(d.d2 - d.d1), 0.1);  // two independent draws
    // The global torch seed plays no part.
    torch::manual_seed(999);
    EXPECT_TRUE(
        torch::equal(liftlab::random_filter_normalised_directions(center, layout, 7).d1, d.d1));
    // Filter normalisation is scale-equivariant: doubling the centre doubles the directions.
    auto doubled = liftlab::random_filter_normalised_directions(2 * center, layout, 7);
    EXPECT_LT(max_abs(doubled.d1 - 2 * d.d1), 1e-12 * max_abs(d.d1));
}

TEST(LandscapeRandomDirections, RejectsLayoutMismatch) {
    auto center = torch::randn({10}, kF64);
    expect_invalid(
        [&] {
            liftlab::random_filter_normalised_directions(center, {{{3, 3}}}, 1);
        },
        "layout");
    expect_invalid(
        [&] {
            liftlab::random_filter_normalised_directions(torch::randn({2, 5}, kF64), {{{2, 5}}}, 1);
        },
        "center");
}

// ---------------------------------------------------------------- grid evaluation

namespace {
// f(x) = ½‖A x‖² per row of a C × P batch; along the plane it is the quadratic
// q(α, β) = ½‖Ac‖² + α⟨Ac, Ad1⟩ + β⟨Ac, Ad2⟩ + ½α²‖Ad1‖² + αβ⟨Ad1, Ad2⟩ + ½β²‖Ad2‖².
struct Quadratic {
    Tensor a, center;
    PlaneDirections dirs;
    double c0, c1, c2, c11, c12, c22;
    Quadratic(int64_t p, int64_t m) {
        a = torch::randn({m, p}, kF64);
        center = torch::randn({p}, kF64);
        dirs = {"test", torch::randn({p}, kF64), torch::randn({p}, kF64)};
        auto ac = a.matmul(center), a1 = a.matmul(dirs.d1), a2 = a.matmul(dirs.d2);
        c0 = 0.5 * dot_value(ac, ac);
        c1 = dot_value(ac, a1);
        c2 = dot_value(ac, a2);
        c11 = 0.5 * dot_value(a1, a1);
        c12 = dot_value(a1, a2);
        c22 = 0.5 * dot_value(a2, a2);
    }
    double exact(double al, double be) const {
        return c0 + al * c1 + be * c2 + al * al * c11 + al * be * c12 + be * be * c22;
    }
    Tensor operator()(const Tensor& x) const { return 0.5 * x.matmul(a.t()).pow(2).sum(1); }
};
}  // namespace

TEST(LandscapeGridEval, QuadraticMatchesClosedFormForAnyBatchSize) {
    torch::manual_seed(44);
    const Quadratic q(20, 7);
    const liftlab::LandscapeRange range{-1.5, 2.0, -0.5, 1.0};
    const int na = 7, nb = 5, cells = na * nb;
    for (int batch : {1, 4, 35, 64}) {  // 4 does not divide 35; 64 exceeds it
        int calls = 0, rows = 0;
        bool within = true;
        auto loss = [&](const Tensor& x) {
            ++calls;
            rows += static_cast<int>(x.size(0));
            within = within && x.size(0) <= batch && x.size(1) == 20;
            return q(x);
        };
        auto grid = liftlab::compute_landscape(q.center, q.dirs, range, na, nb, loss, batch);
        EXPECT_EQ(calls, (cells + batch - 1) / batch) << "batch " << batch;
        EXPECT_EQ(rows, cells);
        EXPECT_TRUE(within);
        ASSERT_EQ(grid.loss.size(), static_cast<size_t>(cells));
        EXPECT_EQ(grid.alpha(0), -1.5);  // end points exact
        EXPECT_EQ(grid.alpha(na - 1), 2.0);
        EXPECT_EQ(grid.beta(nb - 1), 1.0);
        for (int j = 0; j < nb; ++j) {
            for (int i = 0; i < na; ++i) {
                const double al = -1.5 + 3.5 * i / (na - 1), be = -0.5 + 1.5 * j / (nb - 1);
                const double want = q.exact(al, be);
                // Values O(10–100) from sums of ~20 products: rounding ~1e-13 relative.
                EXPECT_NEAR(grid.at(i, j), want, 1e-10 * std::max(1.0, std::abs(want)))
                    << "cell " << i << "," << j << " batch " << batch;
                EXPECT_EQ(grid.at(i, j), grid.loss[static_cast<size_t>(j * na + i)]);
            }
        }
    }
}

TEST(LandscapeGridEval, NonFiniteLossesAreStoredAsNaN) {
    torch::manual_seed(45);
    const Quadratic q(6, 3);
    auto loss = [&](const Tensor& x) {  // +inf on the right half-plane of the first coordinate
        auto v = q(x);
        return torch::where(x.select(1, 0) > q.center[0].item<double>(),
                            torch::full_like(v, std::numeric_limits<double>::infinity()), v);
    };
    auto grid = liftlab::compute_landscape(q.center, q.dirs, {}, 5, 5, loss, 3);
    int nan = 0;
    for (double v : grid.loss) {
        EXPECT_FALSE(std::isinf(v));
        nan += std::isnan(v);
    }
    EXPECT_GT(nan, 0);
    EXPECT_LT(nan, 25);
}

TEST(LandscapeGridEval, ProgressIsMonotoneEndsAtOneAndCancels) {
    torch::manual_seed(46);
    const Quadratic q(8, 4);
    std::vector<double> seen;
    auto record = [&](double f) {
        seen.push_back(f);
        return true;
    };
    liftlab::compute_landscape(q.center, q.dirs, {}, 4, 5, q, 6, record);  // 20 cells, 4 batches
    ASSERT_EQ(seen.size(), 4u);
    for (size_t k = 1; k < seen.size(); ++k) EXPECT_GT(seen[k], seen[k - 1]);
    EXPECT_EQ(seen.back(), 1.0);
    EXPECT_DOUBLE_EQ(seen.front(), 6.0 / 20);

    int calls = 0, reports = 0;
    auto counted = [&](const Tensor& x) {
        ++calls;
        return q(x);
    };
    auto cancel_second = [&](double) { return ++reports < 2; };
    EXPECT_THROW(liftlab::compute_landscape(q.center, q.dirs, {}, 4, 5, counted, 6, cancel_second),
                 liftlab::LandscapeCancelled);
    EXPECT_EQ(calls, 2);  // stops right after the cancelling report
}

TEST(LandscapeGridEval, RejectsBadArguments) {
    torch::manual_seed(47);
    const Quadratic q(8, 4);
    const liftlab::LandscapeRange r;
    expect_invalid([&] { liftlab::compute_landscape(q.center, q.dirs, r, 1, 5, q); }, "n_alpha");
    expect_invalid([&] { liftlab::compute_landscape(q.center, q.dirs, r, 5, 0, q); }, "n_beta");
    expect_invalid([&] { liftlab::compute_landscape(q.center, q.dirs, r, 3, 3, q, 0); },
                   "cells_per_batch");
    expect_invalid(
        [&] {
            liftlab::compute_landscape(q.center, {"t", torch::randn({9}, kF64), q.dirs.d2}, r, 3, 3,
                                       q);
        },
        "dirs.d1");
    expect_invalid(
        [&] {
            liftlab::compute_landscape(q.center, q.dirs, {1, -1, -1, 1}, 3, 3, q);
        },
        "range");
    auto wrong_count = [](const Tensor& x) { return torch::zeros({x.size(0) + 1}, kF64); };
    expect_invalid([&] { liftlab::compute_landscape(q.center, q.dirs, r, 3, 3, wrong_count); },
                   "loss returned");
    liftlab::LandscapeGrid g;
    g.n_alpha = g.n_beta = 2;
    g.loss.assign(4, 0);
    EXPECT_THROW(g.at(2, 0), std::out_of_range);
    EXPECT_THROW(g.alpha(-1), std::out_of_range);
}

TEST(LandscapeRange, CoversPointsAndOriginWithMargin) {
    // α ∈ {1, 3} ∪ {0} → [0, 3], span 3, margin 0.25 → [−0.75, 3.75].
    // β ∈ {−2, 0.5} ∪ {0} → [−2, 0.5], span 2.5 → [−2.625, 1.125]. All exact in binary.
    auto coords = torch::tensor({1.0, -2.0, 3.0, 0.5}, kF64).view({2, 2});
    auto r = liftlab::range_covering(coords, 0.25, 1.0);
    EXPECT_EQ(r.alpha_min, -0.75);
    EXPECT_EQ(r.alpha_max, 3.75);
    EXPECT_EQ(r.beta_min, -2.625);
    EXPECT_EQ(r.beta_max, 1.125);
    // A minimum half-width of 3 widens both axes about their midpoints (1.5 and −0.75).
    r = liftlab::range_covering(coords, 0.25, 3.0);
    EXPECT_EQ(r.alpha_min, -1.5);
    EXPECT_EQ(r.alpha_max, 4.5);
    EXPECT_EQ(r.beta_min, -3.75);
    EXPECT_EQ(r.beta_max, 2.25);
    r = liftlab::range_covering(torch::zeros({0, 2}, kF64));  // nothing to cover: ±min half-width
    EXPECT_EQ(r.alpha_min, -1.0);
    EXPECT_EQ(r.beta_max, 1.0);
    auto bad = coords.clone();
    bad[0][0] = std::numeric_limits<double>::quiet_NaN();
    expect_invalid([&] { liftlab::range_covering(bad); }, "finite");
    expect_invalid([&] { liftlab::range_covering(torch::zeros({3, 3}, kF64)); }, "coords");
    expect_invalid([&] { liftlab::range_covering(coords, -0.1); }, "margin");
}

// ---------------------------------------------------------------- cache

TEST(LandscapeCache, KeyChangesWithEveryInput) {
    torch::manual_seed(48);
    auto c = torch::randn({30}, kF64);
    PlaneDirections d{"random", torch::randn({30}, kF64), torch::randn({30}, kF64)};
    liftlab::LandscapeRange r{-1, 1, -2, 2};
    const auto key = liftlab::landscape_cache_key(c, d, r, 41, 41, "theta");
    EXPECT_EQ(key.size(), 16u);
    EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(liftlab::landscape_cache_key(c.clone(), d, r, 41, 41, "theta"), key);

    auto nudged = [](const Tensor& t) {  // the smallest possible change: one ulp in one entry
        auto u = t.clone();
        u[3] = std::nextafter(u[3].item<double>(), 1e9);
        return u;
    };
    std::set<std::string> keys{key};
    keys.insert(liftlab::landscape_cache_key(c, d, r, 42, 41, "theta"));
    keys.insert(liftlab::landscape_cache_key(c, d, r, 41, 40, "theta"));
    keys.insert(liftlab::landscape_cache_key(c, d, {-1, 1.5, -2, 2}, 41, 41, "theta"));
    keys.insert(liftlab::landscape_cache_key(c, d, {-1, 1, -2.5, 2}, 41, 41, "theta"));
    keys.insert(liftlab::landscape_cache_key(nudged(c), d, r, 41, 41, "theta"));
    keys.insert(
        liftlab::landscape_cache_key(c, {"random", nudged(d.d1), d.d2}, r, 41, 41, "theta"));
    keys.insert(
        liftlab::landscape_cache_key(c, {"random", d.d1, nudged(d.d2)}, r, 41, 41, "theta"));
    keys.insert(liftlab::landscape_cache_key(c, {"random", d.d2, d.d1}, r, 41, 41, "theta"));
    keys.insert(liftlab::landscape_cache_key(c, {"pca", d.d1, d.d2}, r, 41, 41, "theta"));
    keys.insert(liftlab::landscape_cache_key(c, d, r, 41, 41, "lifted"));
    EXPECT_EQ(keys.size(), 11u);  // all distinct
}

TEST(LandscapeCache, RoundTripIsBitExactAndKeyMismatchIsAMiss) {
    const liftlab::test::KeepSubnormals subnormals;  // the values below include denormals
    torch::manual_seed(49);
    LandscapeTempDir dir;
    const std::string path = dir.file("sub/landscape.json");  // parent folder is created
    liftlab::LandscapeGrid grid;
    grid.n_alpha = 4;
    grid.n_beta = 3;
    grid.range = {-0.1, 1.0 / 3, -1e-300, 7.25};
    const double nan = std::numeric_limits<double>::quiet_NaN();
    grid.loss = {0.1,
                 1.0 / 3,
                 -0.0,
                 5e-324,
                 std::numeric_limits<double>::max(),
                 nan,
                 1e300,
                 M_PI,
                 -2.5,
                 1e-17,
                 123456789.123456789,
                 std::exp(1.0)};
    liftlab::PlaneTrajectories paths{
        {"lifter", {{0.1, -0.2}, {1.0 / 7, nan}}}, {"softplus", {{3.0, 4.0}}}, {"empty", {}}};
    liftlab::save_landscape(path, "abc123", grid, "random", paths);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path() / "sub"), {}), 1);  // no temp left

    liftlab::LandscapeGrid back;
    liftlab::PlaneTrajectories back_paths;
    std::string kind;
    ASSERT_TRUE(liftlab::load_landscape(path, "abc123", back, back_paths, &kind));
    EXPECT_EQ(kind, "random");
    EXPECT_EQ(back.n_alpha, 4);
    EXPECT_EQ(back.n_beta, 3);
    EXPECT_EQ(std::memcmp(&back.range, &grid.range, sizeof grid.range), 0);
    ASSERT_EQ(back.loss.size(), grid.loss.size());
    for (size_t k = 0; k < grid.loss.size(); ++k) {
        if (std::isnan(grid.loss[k])) {
            EXPECT_TRUE(std::isnan(back.loss[k]));
        } else {  // bit for bit, so −0.0 and the denormal must survive too
            EXPECT_EQ(std::memcmp(&back.loss[k], &grid.loss[k], sizeof(double)), 0) << k;
        }
    }
    ASSERT_EQ(back_paths.size(), 3u);
    EXPECT_EQ(std::memcmp(&back_paths["lifter"][0], &paths["lifter"][0], 16), 0);
    EXPECT_EQ(back_paths["lifter"][1][0], 1.0 / 7);
    EXPECT_TRUE(std::isnan(back_paths["lifter"][1][1]));
    EXPECT_EQ(back_paths["softplus"][0][1], 4.0);
    EXPECT_TRUE(back_paths["empty"].empty());

    // A different key or a missing file: false, outputs untouched.
    liftlab::LandscapeGrid untouched;
    untouched.n_alpha = 99;
    liftlab::PlaneTrajectories untouched_paths{{"x", {{1, 2}}}};
    EXPECT_FALSE(liftlab::load_landscape(path, "abc124", untouched, untouched_paths));
    EXPECT_FALSE(
        liftlab::load_landscape(dir.file("none.json"), "abc123", untouched, untouched_paths));
    EXPECT_EQ(untouched.n_alpha, 99);
    EXPECT_EQ(untouched_paths.size(), 1u);

    // Overwriting replaces the entry atomically: the new key hits, the old one misses.
    liftlab::save_landscape(path, "def456", grid, "pca", {});
    EXPECT_FALSE(liftlab::load_landscape(path, "abc123", back, back_paths));
    EXPECT_TRUE(liftlab::load_landscape(path, "def456", back, back_paths));
    EXPECT_TRUE(back_paths.empty());
}

TEST(LandscapeCache, EndToEndKeyFromComputedGrid) {
    // The intended use: key from the inputs, compute, save; a changed grid size gives another key,
    // which misses the saved file.
    torch::manual_seed(50);
    LandscapeTempDir dir;
    const Quadratic q(10, 4);
    const liftlab::LandscapeRange r{-1, 1, -1, 1};
    auto grid = liftlab::compute_landscape(q.center, q.dirs, r, 5, 4, q, 7);
    const auto key = liftlab::landscape_cache_key(q.center, q.dirs, r, 5, 4, "theta");
    liftlab::save_landscape(dir.file("l.json"), key, grid, q.dirs.kind, {});
    liftlab::LandscapeGrid back;
    liftlab::PlaneTrajectories paths;
    ASSERT_TRUE(liftlab::load_landscape(dir.file("l.json"), key, back, paths));
    EXPECT_EQ(back.loss, grid.loss);  // finite values: == is bit equality here
    const auto other = liftlab::landscape_cache_key(q.center, q.dirs, r, 5, 5, "theta");
    EXPECT_NE(other, key);
    EXPECT_FALSE(liftlab::load_landscape(dir.file("l.json"), other, back, paths));
}

TEST(LandscapeCache, MalformedFilesAreDataErrors) {
    LandscapeTempDir dir;
    liftlab::LandscapeGrid g;
    liftlab::PlaneTrajectories t;
    std::ofstream(dir.file("bad.json")) << "{not json";
    EXPECT_THROW(liftlab::load_landscape(dir.file("bad.json"), "k", g, t), liftlab::DataError);
    std::ofstream(dir.file("other.json")) << R"({"format": "something-else", "key": "k"})";
    EXPECT_THROW(liftlab::load_landscape(dir.file("other.json"), "k", g, t), liftlab::DataError);
    std::ofstream(dir.file("short.json"))
        << R"({"format": "liftlab-landscape", "version": 1, "key": "k", "direction_kind": "pca",)"
        << R"( "n_alpha": 2, "n_beta": 2, "range": {"alpha_min": -1, "alpha_max": 1,)"
        << R"( "beta_min": -1, "beta_max": 1}, "loss": [1, 2, 3], "trajectories": {}})";
    EXPECT_THROW(liftlab::load_landscape(dir.file("short.json"), "k", g, t), liftlab::DataError);
    EXPECT_EQ(g.n_alpha, 0);  // untouched
    liftlab::LandscapeGrid bad;
    bad.n_alpha = 3;
    bad.n_beta = 3;
    bad.loss.assign(8, 0);
    expect_invalid([&] { liftlab::save_landscape(dir.file("x.json"), "k", bad, "pca", {}); },
                   "grid");
}
