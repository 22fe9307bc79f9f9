#include "stats/hypothesis_tests.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/c_numbers.h"

namespace liftlab::stats {

namespace {

constexpr double kStatsNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Continued fraction of I_x(a, b) (modified Lentz), valid for x < (a + 1)/(a + b + 2).
double beta_continued_fraction(double x, double a, double b) {
    constexpr double tiny = 1e-300, eps = 1e-15;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (std::abs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 10000; ++m) {
        const double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + aa * d;
        if (std::abs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (std::abs(c) < tiny) c = tiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + aa * d;
        if (std::abs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (std::abs(c) < tiny) c = tiny;
        d = 1 / d;
        const double delta = d * c;
        h *= delta;
        if (std::abs(delta - 1) < eps) break;
    }
    return h;
}

// Bisection of a non-decreasing f on [lo, hi] for f(x) = target.
template <typename F>
double bisect(F f, double target, double lo, double hi, double tol) {
    for (int i = 0; i < 400 && hi - lo > tol * std::max(1.0, std::abs(lo) + std::abs(hi)); ++i) {
        const double mid = 0.5 * (lo + hi);
        (f(mid) < target ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

double log_binomial_pmf(int64_t k, int64_t n, double p) {
    if (p <= 0) return k == 0 ? 0.0 : -kInf;
    if (p >= 1) return k == n ? 0.0 : -kInf;
    const double nn = static_cast<double>(n), kk = static_cast<double>(k);
    return std::lgamma(nn + 1) - std::lgamma(kk + 1) - std::lgamma(nn - kk + 1) + kk * std::log(p) +
           (nn - kk) * std::log1p(-p);
}

double log_hypergeometric(int64_t a, int64_t row1, int64_t col1, int64_t total) {
    auto lchoose = [](int64_t n, int64_t k) {
        return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
    };
    return lchoose(col1, a) + lchoose(total - col1, row1 - a) - lchoose(total, row1);
}

double clamp_p(double p) {
    return std::min(1.0, std::max(0.0, p));
}

void require_stats(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
}

// The t-test's p and interval from an estimate, its se and df.
TTest t_result(double estimate, double se, double df, Alternative alt, double confidence) {
    TTest r;
    r.estimate = estimate;
    r.se = se;
    r.df = df;
    if (se <= 0) {
        r.statistic = estimate == 0 ? 0 : (estimate > 0 ? kInf : -kInf);
        const bool differs = estimate != 0;
        switch (alt) {
            case Alternative::TwoSided:
                r.p = differs ? 0 : 1;
                break;
            case Alternative::Less:
                r.p = estimate < 0 ? 0 : 1;
                break;
            case Alternative::Greater:
                r.p = estimate > 0 ? 0 : 1;
                break;
        }
        r.ci_low = r.ci_high = estimate;
        if (alt == Alternative::Less) r.ci_low = -kInf;
        if (alt == Alternative::Greater) r.ci_high = kInf;
        return r;
    }
    r.statistic = estimate / se;
    const double lower = student_t_cdf(r.statistic, df);
    const double upper = student_t_cdf(-r.statistic, df);
    switch (alt) {
        case Alternative::TwoSided:
            r.p = clamp_p(2 * std::min(lower, upper));
            break;
        case Alternative::Less:
            r.p = lower;
            break;
        case Alternative::Greater:
            r.p = upper;
            break;
    }
    if (alt == Alternative::TwoSided) {
        const double q = student_t_quantile(0.5 + 0.5 * confidence, df);
        r.ci_low = estimate - q * se;
        r.ci_high = estimate + q * se;
    } else {
        const double q = student_t_quantile(confidence, df);
        r.ci_low = alt == Alternative::Greater ? estimate - q * se : -kInf;
        r.ci_high = alt == Alternative::Less ? estimate + q * se : kInf;
    }
    return r;
}

// Counts of U = 0 … n_a·n_b over all C(n_a + n_b, n_a) orderings without ties (the classical
// recursion f(a, b, u) = f(a − 1, b, u − b) + f(a, b − 1, u)), as probabilities.
std::vector<double> exact_u_distribution(int na, int nb) {
    // table[b][u] for the current a.
    std::vector<std::vector<double>> prev(nb + 1), cur(nb + 1);
    for (int b = 0; b <= nb; ++b) prev[b] = {1.0};  // a = 0: U = 0 always
    for (int a = 1; a <= na; ++a) {
        for (int b = 0; b <= nb; ++b) {
            cur[b].assign(static_cast<size_t>(a) * b + 1, 0.0);
            for (int u = 0; u <= a * b; ++u) {
                double v = 0;
                if (u - b >= 0 && u - b < static_cast<int>(prev[b].size())) v += prev[b][u - b];
                if (b > 0 && u < static_cast<int>(cur[b - 1].size())) v += cur[b - 1][u];
                cur[b][u] = v;
            }
        }
        std::swap(prev, cur);
    }
    std::vector<double> f = prev[nb];
    const double total = std::accumulate(f.begin(), f.end(), 0.0);
    for (double& x : f) x /= total;
    return f;
}

}  // namespace

const char* to_string(Alternative a) {
    switch (a) {
        case Alternative::TwoSided:
            return "two-sided";
        case Alternative::Less:
            return "less";
        case Alternative::Greater:
            return "greater";
    }
    return "?";
}

double normal_cdf(double z) {
    return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double normal_quantile(double p) {
    require_stats(p > 0 && p < 1, "normal_quantile: p must be in (0, 1), got " + std::to_string(p));
    // Acklam's rational approximation (relative error < 1.2e-9) ...
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    const double lo = 0.02425;
    double x;
    if (p < lo) {
        const double q = std::sqrt(-2 * std::log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p <= 1 - lo) {
        const double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    } else {
        const double q = std::sqrt(-2 * std::log1p(-p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    // ... refined by Halley steps on Φ(x) − p.
    for (int i = 0; i < 2; ++i) {
        const double e = normal_cdf(x) - p;
        const double u = e * std::sqrt(2 * M_PI) * std::exp(0.5 * x * x);
        x = x - u / (1 + 0.5 * x * u);
    }
    return x;
}

double regularized_beta(double x, double a, double b) {
    require_stats(a > 0 && b > 0, "regularized_beta: a and b must be positive");
    require_stats(x >= 0 && x <= 1, "regularized_beta: x must be in [0, 1]");
    if (x == 0) return 0;
    if (x == 1) return 1;
    const double log_front =
        std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
    if (x < (a + 1) / (a + b + 2))
        return std::exp(log_front) * beta_continued_fraction(x, a, b) / a;
    return 1 - std::exp(log_front) * beta_continued_fraction(1 - x, b, a) / b;
}

double regularized_gamma_p(double a, double x) {
    require_stats(a > 0, "regularized_gamma_p: a must be positive");
    require_stats(x >= 0, "regularized_gamma_p: x must be non-negative");
    if (x == 0) return 0;
    const double log_front = a * std::log(x) - x - std::lgamma(a);
    if (x < a + 1) {  // series
        double term = 1 / a, sum = term;
        for (int n = 1; n < 100000; ++n) {
            term *= x / (a + n);
            sum += term;
            if (std::abs(term) < std::abs(sum) * 1e-16) break;
        }
        return std::min(1.0, sum * std::exp(log_front));
    }
    // Continued fraction of Q(a, x) (modified Lentz).
    constexpr double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < 100000; ++i) {
        const double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (std::abs(d) < tiny) d = tiny;
        c = b + an / c;
        if (std::abs(c) < tiny) c = tiny;
        d = 1 / d;
        const double delta = d * c;
        h *= delta;
        if (std::abs(delta - 1) < 1e-16) break;
    }
    return std::max(0.0, 1 - std::exp(log_front) * h);
}

double student_t_cdf(double t, double df) {
    require_stats(df > 0, "student_t_cdf: df must be positive");
    if (std::isnan(t)) return kStatsNaN;
    if (std::isinf(t)) return t > 0 ? 1 : 0;
    const double tail = 0.5 * regularized_beta(df / (df + t * t), 0.5 * df, 0.5);
    return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
    require_stats(p > 0 && p < 1, "student_t_quantile: p must be in (0, 1)");
    require_stats(df > 0, "student_t_quantile: df must be positive");
    double hi = 1;
    while (student_t_cdf(hi, df) < std::max(p, 1 - p)) hi *= 2;
    return bisect([df](double t) { return student_t_cdf(t, df); }, p, -hi, hi, 1e-15);
}

double chi_squared_sf(double x, double df) {
    require_stats(df > 0, "chi_squared_sf: df must be positive");
    if (x <= 0) return 1;
    return 1 - regularized_gamma_p(0.5 * df, 0.5 * x);
}

double mean(const std::vector<double>& x) {
    if (x.empty()) return kStatsNaN;
    return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

double sample_sd(const std::vector<double>& x) {
    if (x.empty()) return kStatsNaN;
    if (x.size() < 2) return 0;
    const double m = mean(x);
    double s = 0;
    for (double v : x) s += (v - m) * (v - m);
    return std::sqrt(s / static_cast<double>(x.size() - 1));
}

TTest welch_t_test(const std::vector<double>& a, const std::vector<double>& b, Alternative alt,
                   double confidence) {
    require_stats(a.size() >= 2 && b.size() >= 2,
                  "welch_t_test: each sample needs at least 2 values");
    const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
    const double va = std::pow(sample_sd(a), 2) / na, vb = std::pow(sample_sd(b), 2) / nb;
    const double se = std::sqrt(va + vb);
    const double df =
        se > 0 ? (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1)) : na + nb - 2;
    return t_result(mean(a) - mean(b), se, df, alt, confidence);
}

TTest one_sample_t_test(const std::vector<double>& x, double mu0, Alternative alt,
                        double confidence) {
    require_stats(x.size() >= 2, "one_sample_t_test: needs at least 2 values");
    const double n = static_cast<double>(x.size());
    return t_result(mean(x) - mu0, sample_sd(x) / std::sqrt(n), n - 1, alt, confidence);
}

RankTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b,
                        Alternative alt) {
    require_stats(!a.empty() && !b.empty(), "mann_whitney_u: both samples need values");
    RankTest r;
    bool ties = false;
    for (double x : a)
        for (double y : b) {
            if (x > y) r.u += 1;
            if (x == y) {
                r.u += 0.5;
                ties = true;
            }
        }
    // Ties within a sample matter for the variance too.
    std::vector<double> all(a);
    all.insert(all.end(), b.begin(), b.end());
    std::sort(all.begin(), all.end());
    double tie_term = 0;  // Σ (t³ − t) over groups of tied values
    for (size_t i = 0; i < all.size();) {
        size_t j = i;
        while (j < all.size() && all[j] == all[i]) ++j;
        const double t = static_cast<double>(j - i);
        if (t > 1) ties = true;
        tie_term += t * t * t - t;
        i = j;
    }
    const int na = static_cast<int>(a.size()), nb = static_cast<int>(b.size());
    if (!ties && static_cast<int64_t>(na) * nb <= 10000) {
        const auto f = exact_u_distribution(na, nb);
        const int u = static_cast<int>(std::lround(r.u));
        double le = 0, ge = 0;
        for (int k = 0; k <= u; ++k) le += f[k];
        for (int k = u; k < static_cast<int>(f.size()); ++k) ge += f[k];
        r.exact = true;
        // "Greater": a tends to exceed b, i.e. large U.
        switch (alt) {
            case Alternative::Less:
                r.p = clamp_p(le);
                break;
            case Alternative::Greater:
                r.p = clamp_p(ge);
                break;
            case Alternative::TwoSided:
                r.p = clamp_p(2 * std::min(le, ge));
                break;
        }
        return r;
    }
    const double n = na + nb;
    const double mu = 0.5 * na * nb;
    const double var = na * nb / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
    if (var <= 0) {
        r.p = 1;
        return r;
    }
    const double sd = std::sqrt(var);
    const double d = r.u - mu;
    switch (alt) {
        case Alternative::Greater:
            r.p = 1 - normal_cdf((d - 0.5) / sd);
            break;
        case Alternative::Less:
            r.p = normal_cdf((d + 0.5) / sd);
            break;
        case Alternative::TwoSided:
            r.p = clamp_p(2 * (1 - normal_cdf((std::abs(d) - 0.5) / sd)));
            break;
    }
    r.p = clamp_p(r.p);
    return r;
}

CombinedTest fisher_combined(const std::vector<double>& p_values) {
    require_stats(!p_values.empty(), "fisher_combined: no p-values");
    CombinedTest r;
    for (double p : p_values) {
        require_stats(p > 0 && p <= 1, "fisher_combined: a p-value outside (0, 1]");
        r.statistic += -2 * std::log(p);
    }
    r.df = 2 * static_cast<int>(p_values.size());
    r.p = chi_squared_sf(r.statistic, r.df);
    return r;
}

double binomial_test(int64_t k, int64_t n, double p0, Alternative alt) {
    require_stats(n >= 1 && k >= 0 && k <= n, "binomial_test: need 0 <= k <= n, n >= 1");
    require_stats(p0 >= 0 && p0 <= 1, "binomial_test: p0 must be in [0, 1]");
    auto pmf = [&](int64_t i) { return std::exp(log_binomial_pmf(i, n, p0)); };
    double p = 0;
    if (alt == Alternative::Greater) {
        for (int64_t i = k; i <= n; ++i) p += pmf(i);
    } else if (alt == Alternative::Less) {
        for (int64_t i = 0; i <= k; ++i) p += pmf(i);
    } else {
        const double at = pmf(k) * (1 + 1e-7);
        for (int64_t i = 0; i <= n; ++i)
            if (pmf(i) <= at) p += pmf(i);
    }
    return clamp_p(p);
}

std::pair<double, double> clopper_pearson(int64_t k, int64_t n, double confidence) {
    require_stats(n >= 1 && k >= 0 && k <= n, "clopper_pearson: need 0 <= k <= n, n >= 1");
    const double alpha = 1 - confidence;
    const double kk = static_cast<double>(k), nn = static_cast<double>(n);
    // Beta quantiles by bisection on the regularised incomplete beta function.
    auto beta_q = [](double q, double a, double b) {
        return bisect([&](double x) { return regularized_beta(x, a, b); }, q, 0.0, 1.0, 1e-14);
    };
    const double lo = k == 0 ? 0.0 : beta_q(alpha / 2, kk, nn - kk + 1);
    const double hi = k == n ? 1.0 : beta_q(1 - alpha / 2, kk + 1, nn - kk);
    return {lo, hi};
}

double fisher_exact_test(int64_t a, int64_t b, int64_t c, int64_t d, Alternative alt) {
    require_stats(a >= 0 && b >= 0 && c >= 0 && d >= 0, "fisher_exact_test: negative count");
    const int64_t row1 = a + b, col1 = a + c, total = a + b + c + d;
    require_stats(total > 0, "fisher_exact_test: empty table");
    const int64_t lo = std::max<int64_t>(0, row1 + col1 - total), hi = std::min(row1, col1);
    auto prob = [&](int64_t x) { return std::exp(log_hypergeometric(x, row1, col1, total)); };
    double p = 0;
    if (alt == Alternative::Greater) {
        for (int64_t x = a; x <= hi; ++x) p += prob(x);
    } else if (alt == Alternative::Less) {
        for (int64_t x = lo; x <= a; ++x) p += prob(x);
    } else {
        const double at = prob(a) * (1 + 1e-7);
        for (int64_t x = lo; x <= hi; ++x)
            if (prob(x) <= at) p += prob(x);
    }
    return clamp_p(p);
}

int64_t seeds_for_power(double delta, double sd_a, double sd_b, double alpha, double power,
                        bool one_sided) {
    if (delta == 0 || !std::isfinite(delta)) return -1;
    const double za = normal_quantile(1 - (one_sided ? alpha : alpha / 2));
    const double zb = normal_quantile(power);
    const double n =
        (sd_a * sd_a + sd_b * sd_b) * (za + zb) * (za + zb) / (delta * delta) + za * za / 4;
    return std::max<int64_t>(2, static_cast<int64_t>(std::ceil(n - 1e-9)));
}

int64_t seeds_for_power_one_sample(double delta, double sd, double alpha, double power,
                                   bool one_sided) {
    if (delta == 0 || !std::isfinite(delta)) return -1;
    const double za = normal_quantile(1 - (one_sided ? alpha : alpha / 2));
    const double zb = normal_quantile(power);
    const double n = sd * sd * (za + zb) * (za + zb) / (delta * delta) + za * za / 2;
    return std::max<int64_t>(2, static_cast<int64_t>(std::ceil(n - 1e-9)));
}

double basin_threshold(const std::vector<double>& losses, int grid) {
    std::vector<double> v;
    for (double x : losses)
        if (std::isfinite(x)) v.push_back(x);
    const size_t n = v.size();
    if (n < 4 || grid < 3) return kStatsNaN;
    std::sort(v.begin(), v.end());
    // Quartiles by the "exclusive" rule (positions (n + 1)·i/4, clamped), as Python's
    // statistics.quantiles, so the threshold matches scripts/cpflow-demo-stats.py.
    auto quartile = [&](int i) {
        const int64_t m = static_cast<int64_t>(n) + 1;
        int64_t j = i * m / 4;
        j = std::clamp<int64_t>(j, 1, static_cast<int64_t>(n) - 1);
        const int64_t delta = i * m - j * 4;
        return (v[j - 1] * static_cast<double>(4 - delta) + v[j] * static_cast<double>(delta)) / 4;
    };
    const double spread = std::min(sample_sd(v), (quartile(3) - quartile(1)) / 1.34);
    if (!(spread > 0)) return kStatsNaN;
    const double h = 0.9 * spread * std::pow(static_cast<double>(n), -0.2);
    const double lo = v.front() - 3 * h, hi = v.back() + 3 * h;
    std::vector<double> x(grid), dens(grid);
    for (int i = 0; i < grid; ++i) {
        x[i] = lo + (hi - lo) * i / (grid - 1);
        double s = 0;
        for (double y : v) s += std::exp(-0.5 * std::pow((x[i] - y) / h, 2));
        dens[i] = s;
    }
    const double top = *std::max_element(dens.begin(), dens.end());
    std::vector<int> modes;
    for (int i = 1; i + 1 < grid; ++i)
        if (dens[i - 1] < dens[i] && dens[i] >= dens[i + 1] && dens[i] >= 0.05 * top)
            modes.push_back(i);
    if (modes.size() < 2) return kStatsNaN;
    int valley = modes[0];
    for (int i = modes[0]; i <= modes[1]; ++i)
        if (dens[i] < dens[valley]) valley = i;
    return x[valley];
}

namespace {

// printf's "%.<decimals>e" by std::to_chars (never the locale).
std::string c_scientific_text(double v, int decimals) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific,
                                 std::max(0, decimals));
    return std::string(buf, r.ptr);
}

}  // namespace

std::string format_number(double v, int digits) {
    if (std::isnan(v)) return "–";
    if (std::isinf(v)) return v > 0 ? "∞" : "−∞";
    const double a = std::abs(v);
    if (a != 0 && (a < 1e-3 || a >= 1e5)) return c_scientific_text(v, digits - 1);
    return c_general(v, digits);
}

std::string format_p(double p) {
    if (std::isnan(p)) return "–";
    if (p < 1e-12) return "< 1e-12";
    if (p < 1e-3) return c_scientific_text(p, 1);
    return c_general(p, 3);
}

}  // namespace liftlab::stats
