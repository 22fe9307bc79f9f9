#include "core/blas_self_check.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "core/blas_lapack.h"
#include "core/c_numbers.h"

namespace liftlab {

namespace {

// A kernel's result is wrong when some entry is off by more than this many units of the
// rounding bound k·u·(|A||B|)_ij (Higham's γ_k, with slack for blocked summation orders).
constexpr double kBoundFactor = 4.0;

struct Case {
    int m, n, k;
};
// Odd sizes, so every kernel's edge handling runs (no multiple of a vector or block width).
constexpr Case kProducts[] = {{7, 5, 3}, {33, 17, 65}, {97, 101, 129}};
constexpr int kSquare[] = {5, 37, 131};

template <typename T>
std::vector<T> random_entries(std::mt19937_64& rng, size_t n) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<T> out(n);
    for (auto& v : out) v = static_cast<T>(u(rng));
    return out;
}

// |A||B| entry by entry (column-major), the scale of each product's rounding error.
template <typename T>
std::vector<double> abs_product(int m, int n, int k, const std::vector<T>& a,
                                const std::vector<T>& b) {
    std::vector<double> out(static_cast<size_t>(m) * n, 0.0);
    for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p)
            for (int i = 0; i < m; ++i)
                out[i + static_cast<size_t>(j) * m] +=
                    std::abs(static_cast<double>(a[i + static_cast<size_t>(p) * m])) *
                    std::abs(static_cast<double>(b[p + static_cast<size_t>(j) * k]));
    return out;
}

struct Tally {
    bool failed = false;
    std::string first_failure;
    double worst = 0;  // largest error / bound seen
    int cases = 0;
    // Compares got with want entry by entry against bound[i] (column-major m × n; lower: only
    // the lower triangle).
    template <typename T>
    void compare(const char* kernel, const std::string& size, int m, int n, const T* got,
                 const std::vector<double>& want, const std::vector<double>& bound, bool lower) {
        ++cases;
        for (int j = 0; j < n; ++j)
            for (int i = lower ? j : 0; i < m; ++i) {
                const size_t at = i + static_cast<size_t>(j) * m;
                const double err = std::abs(static_cast<double>(got[at]) - want[at]);
                const double ratio = err / bound[at];
                if (!(ratio <= 1.0)) {  // also NaN
                    if (!failed) {
                        first_failure = std::string(kernel) + " " + size + ": entry (" +
                                        std::to_string(i) + ", " + std::to_string(j) + ") is " +
                                        c_general(static_cast<double>(got[at]), 9) +
                                        ", the reference " + c_general(want[at], 9) + " (off by " +
                                        c_general(err, 3) + ", rounding bound " +
                                        c_general(bound[at], 3) + ")";
                    }
                    failed = true;
                    return;
                }
                worst = std::max(worst, ratio);
            }
    }
};

std::string product_size(const Case& c) {
    return std::to_string(c.m) + " × " + std::to_string(c.n) + " × " + std::to_string(c.k);
}

}  // namespace

BlasReference plain_blas_reference() {
    BlasReference r;
    r.sgemm = [](int m, int n, int k, const float* a, const float* b, float* c) {
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
                double s = 0;
                for (int p = 0; p < k; ++p)
                    s += static_cast<double>(a[i + static_cast<size_t>(p) * m]) *
                         b[p + static_cast<size_t>(j) * k];
                c[i + static_cast<size_t>(j) * m] = static_cast<float>(s);
            }
    };
    r.dgemm = [](int m, int n, int k, const double* a, const double* b, double* c) {
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
                long double s = 0;
                for (int p = 0; p < k; ++p)
                    s += static_cast<long double>(a[i + static_cast<size_t>(p) * m]) *
                         b[p + static_cast<size_t>(j) * k];
                c[i + static_cast<size_t>(j) * m] = static_cast<double>(s);
            }
    };
    r.dsyrk = [](int n, int k, const double* a, double* c) {
        for (int j = 0; j < n; ++j)
            for (int i = j; i < n; ++i) {
                long double s = 0;
                for (int p = 0; p < k; ++p)
                    s += static_cast<long double>(a[i + static_cast<size_t>(p) * n]) *
                         a[j + static_cast<size_t>(p) * n];
                c[i + static_cast<size_t>(j) * n] = static_cast<double>(s);
            }
    };
    r.dpotrf = [](int n, double* a) {
        for (int j = 0; j < n; ++j) {
            long double d = a[j + static_cast<size_t>(j) * n];
            for (int p = 0; p < j; ++p)
                d -= static_cast<long double>(a[j + static_cast<size_t>(p) * n]) *
                     a[j + static_cast<size_t>(p) * n];
            const long double root = std::sqrt(d);
            a[j + static_cast<size_t>(j) * n] = static_cast<double>(root);
            for (int i = j + 1; i < n; ++i) {
                long double s = a[i + static_cast<size_t>(j) * n];
                for (int p = 0; p < j; ++p)
                    s -= static_cast<long double>(a[i + static_cast<size_t>(p) * n]) *
                         a[j + static_cast<size_t>(p) * n];
                a[i + static_cast<size_t>(j) * n] = static_cast<double>(s / root);
            }
        }
    };
    return r;
}

BlasReference wrong_blas_reference() {
    BlasReference r = plain_blas_reference();
    const auto plain = r.dgemm;
    r.dgemm = [plain](int m, int n, int k, const double* a, const double* b, double* c) {
        plain(m, n, k, a, b, c);
        c[0] *= 1.0 + 1e-6;
    };
    return r;
}

BlasSelfCheck blas_self_check(const BlasReference& reference) {
    BlasSelfCheck out;
    const BlasLapack* blas = blas_lapack();
    if (!blas || !blas->sgemm) {
        out.summary = "the BLAS/LAPACK routines cannot be found";
        return out;
    }
    std::mt19937_64 rng(20261204);
    Tally tally;
    const double u32 = std::numeric_limits<float>::epsilon() / 2;
    const double u64 = std::numeric_limits<double>::epsilon() / 2;
    const char no = 'N', low = 'L';
    for (const Case& c : kProducts) {
        const size_t mn = static_cast<size_t>(c.m) * c.n;
        // float32 (sgemm): what LibTorch's float32 matrix products run on.
        {
            const auto a = random_entries<float>(rng, static_cast<size_t>(c.m) * c.k);
            const auto b = random_entries<float>(rng, static_cast<size_t>(c.k) * c.n);
            std::vector<float> got(mn, 0.f), ref(mn, 0.f);
            const float one = 1.f, zero = 0.f;
            blas->sgemm(&no, &no, &c.m, &c.n, &c.k, &one, a.data(), &c.m, b.data(), &c.k, &zero,
                        got.data(), &c.m, 1, 1);
            reference.sgemm(c.m, c.n, c.k, a.data(), b.data(), ref.data());
            auto bound = abs_product(c.m, c.n, c.k, a, b);
            // The float32 reference itself rounds once: one more unit of the entry.
            for (size_t i = 0; i < mn; ++i)
                bound[i] = kBoundFactor * (c.k + 1) * u32 * bound[i] + 1e-30;
            tally.compare("sgemm", product_size(c), c.m, c.n, got.data(),
                          std::vector<double>(ref.begin(), ref.end()), bound, false);
        }
        {
            const auto a = random_entries<double>(rng, static_cast<size_t>(c.m) * c.k);
            const auto b = random_entries<double>(rng, static_cast<size_t>(c.k) * c.n);
            std::vector<double> got(mn, 0.0), ref(mn, 0.0);
            const double one = 1.0, zero = 0.0;
            blas->dgemm(&no, &no, &c.m, &c.n, &c.k, &one, a.data(), &c.m, b.data(), &c.k, &zero,
                        got.data(), &c.m, 1, 1);
            reference.dgemm(c.m, c.n, c.k, a.data(), b.data(), ref.data());
            auto bound = abs_product(c.m, c.n, c.k, a, b);
            for (auto& v : bound) v = kBoundFactor * (c.k + 1) * u64 * v + 1e-300;
            tally.compare("dgemm", product_size(c), c.m, c.n, got.data(), ref, bound, false);
        }
    }
    for (const int n : kSquare) {
        const int k = n + 13;
        const size_t nn = static_cast<size_t>(n) * n;
        const auto a = random_entries<double>(rng, static_cast<size_t>(n) * k);
        // dsyrk: the Gram matrix ΦᵀΦ of the closed-form solves (lower triangle).
        std::vector<double> gram(nn, 0.0), ref(nn, 0.0);
        const double one = 1.0, zero = 0.0;
        blas->dsyrk(&low, &no, &n, &k, &one, a.data(), &n, &zero, gram.data(), &n, 1, 1);
        reference.dsyrk(n, k, a.data(), ref.data());
        std::vector<double> at(a.size());
        for (int i = 0; i < n; ++i)
            for (int p = 0; p < k; ++p)
                at[p + static_cast<size_t>(i) * k] = a[i + static_cast<size_t>(p) * n];
        auto bound = abs_product(n, n, k, a, at);
        for (auto& v : bound) v = kBoundFactor * (k + 1) * u64 * v + 1e-300;
        const std::string size = std::to_string(n) + " × " + std::to_string(k);
        tally.compare("dsyrk", size, n, n, gram.data(), ref, bound, true);
        // dpotrf on G/k + I (eigenvalues in [1, ~5]: the factor is as accurate as its rounding).
        std::vector<double> spd(nn, 0.0);
        for (int j = 0; j < n; ++j)
            for (int i = j; i < n; ++i)
                spd[i + static_cast<size_t>(j) * n] =
                    ref[i + static_cast<size_t>(j) * n] / k + (i == j ? 1.0 : 0.0);
        std::vector<double> factor = spd, factor_ref = spd;
        int info = 0;
        blas->dpotrf(&low, &n, factor.data(), &n, &info, 1);
        reference.dpotrf(n, factor_ref.data());
        if (info != 0) {
            tally.failed = true;
            if (tally.first_failure.empty())
                tally.first_failure = "dpotrf " + std::to_string(n) + " × " + std::to_string(n) +
                                      ": reported the SPD matrix as not positive definite (info " +
                                      std::to_string(info) + ")";
            continue;
        }
        // Backward stable: |L − L_ref| within a multiple of n·u of the factor's scale (√5).
        std::vector<double> cbound(nn, kBoundFactor * (n + 1) * u64 * 8.0);
        tally.compare("dpotrf", std::to_string(n) + " × " + std::to_string(n), n, n, factor.data(),
                      factor_ref, cbound, true);
    }
    out.passed = !tally.failed;
    if (tally.failed) {
        out.summary = tally.first_failure;
    } else {
        out.summary = "sgemm, dgemm, dsyrk and dpotrf agree with plain loops on " +
                      std::to_string(tally.cases) + " cases (largest error " +
                      c_general(tally.worst, 2) + " of the rounding bound)";
    }
    return out;
}

}  // namespace liftlab
