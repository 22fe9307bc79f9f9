// The statistics behind the claims table (docs/methods.md §13): distribution functions, the
// tests a verdict rests on, and the seed count a test needs. Plain doubles, no torch, no Qt.
//
// Every p-value is for the stated alternative; "less" means the first sample's location is below
// the second's (or below mu0), "greater" above. Confidence intervals follow the alternative: a
// one-sided test gives a half-infinite interval (the open end is ∓infinity).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace liftlab::stats {

enum class Alternative { TwoSided, Less, Greater };
const char* to_string(Alternative a);

// Φ(z) and its inverse (Acklam's rational approximation refined by one Halley step: |error| below
// 1e-14 on (0, 1)). normal_quantile throws std::invalid_argument outside (0, 1).
double normal_cdf(double z);
double normal_quantile(double p);

// I_x(a, b), the regularised incomplete beta function (Lentz's continued fraction), and
// P(a, x) = γ(a, x)/Γ(a), the regularised lower incomplete gamma function (series below a + 1,
// continued fraction above). Relative accuracy ≈ 1e-13. Throw std::invalid_argument for a, b ≤ 0,
// x outside [0, 1] (beta) or x < 0 (gamma).
double regularized_beta(double x, double a, double b);
double regularized_gamma_p(double a, double x);

// Student's t with `df` > 0 degrees of freedom (non-integer allowed, as Welch's): the CDF and its
// inverse (bisection on the CDF, to 1e-12 in t).
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);
// The upper tail P(X ≥ x) of χ² with df > 0 degrees of freedom.
double chi_squared_sf(double x, double df);

// Mean and sample sd (n − 1); sd is 0 for fewer than two values, NaN for none.
double mean(const std::vector<double>& x);
double sample_sd(const std::vector<double>& x);

struct TTest {
    double estimate = 0;   // mean difference (Welch: mean a − mean b; one-sample: mean x − mu0)
    double se = 0;         // its standard error
    double statistic = 0;  // t = estimate / se
    double df = 0;         // degrees of freedom (Welch–Satterthwaite for two samples)
    double p = 1;
    double ci_low = 0, ci_high = 0;  // confidence interval of `estimate` for the alternative
};
// Welch's unequal-variance t-test of mean(a) − mean(b); each sample needs ≥ 2 values. Two
// constant samples (se = 0) give p = 1 when their means are equal and p = 0 otherwise.
TTest welch_t_test(const std::vector<double>& a, const std::vector<double>& b, Alternative alt,
                   double confidence = 0.95);
// One-sample t-test of mean(x) − mu0 (paired differences: x = a − b); ≥ 2 values.
TTest one_sample_t_test(const std::vector<double>& x, double mu0, Alternative alt,
                        double confidence = 0.95);

struct RankTest {
    double u = 0;  // Mann–Whitney U of the first sample: #{a_i > b_j} + ½ #{a_i = b_j}
    double p = 1;
    bool exact = false;  // exact permutation distribution (no ties, n_a·n_b ≤ 10 000)
};
// Mann–Whitney U (Wilcoxon rank-sum): exact without ties for small samples, else the normal
// approximation with the tie correction and a continuity correction of ½.
RankTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b,
                        Alternative alt);

struct CombinedTest {
    double statistic = 0;  // −2 Σ log p_i
    int df = 0;            // 2k
    double p = 1;
};
// Fisher's method: under the null every p_i is uniform (or, like a permutation test's
// (1 + #)/(1 + N), stochastically larger, which keeps the combined test valid), independent,
// and −2 Σ log p_i ~ χ²_{2k}. Throws for an empty list or a p outside (0, 1].
CombinedTest fisher_combined(const std::vector<double>& p_values);

// P-value of the exact binomial test of k successes in n trials against success probability p0.
// Two-sided: the total probability of outcomes no more likely than k (relative tolerance 1e-7).
double binomial_test(int64_t k, int64_t n, double p0, Alternative alt);
// Clopper–Pearson interval of a binomial proportion at `confidence` (two-sided).
std::pair<double, double> clopper_pearson(int64_t k, int64_t n, double confidence = 0.95);
// Fisher's exact test of the 2 × 2 table [[a, b], [c, d]] (rows: groups, columns: success,
// failure). Greater: the first row's success share is the larger one.
double fisher_exact_test(int64_t a, int64_t b, int64_t c, int64_t d, Alternative alt);

// Seeds per group a two-sample t-test needs to detect a difference `delta` between means with
// power `power` at level `alpha`, given the two groups' sds: the normal approximation
// n = (sd_a² + sd_b²)(z_α + z_β)²/δ² plus Guenther's correction z_α²/4, rounded up (Cohen's
// table: 64 per group for d = 0.5, two-sided 0.05, power 0.8). z_α is z_{1−α/2} two-sided,
// z_{1−α} one-sided. Returns −1 when delta is 0 and 2 at least otherwise.
int64_t seeds_for_power(double delta, double sd_a, double sd_b, double alpha, double power,
                        bool one_sided);
// The same for a one-sample (paired) t-test of a mean `delta` away from its null value, with sd.
int64_t seeds_for_power_one_sample(double delta, double sd, double alpha, double power,
                                   bool one_sided);

// The low-loss basin of a set of final losses: a Gaussian kernel density estimate (Silverman's
// bandwidth 0.9·min(sd, IQR/1.34)·n^(−1/5)) on `grid` points spanning the data ± 3 bandwidths;
// its modes are the local maxima holding at least 5 % of the highest; the threshold is the
// density's minimum between the lowest-loss mode and the next one. NaN when there is one mode
// (no separate basin) or fewer than 3 distinct values.
double basin_threshold(const std::vector<double>& losses, int grid = 2000);

// "1.23e-04"-style text with `digits` significant digits, locale-free ("–" for NaN).
std::string format_number(double v, int digits = 3);
// "0.0123", "< 1e-12"-style p-value text, locale-free.
std::string format_p(double p);

}  // namespace liftlab::stats
