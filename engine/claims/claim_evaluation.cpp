#include "claims/claim_evaluation.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "run/run_files.h"
#include "run/run_folder_schema.h"
#include "run/run_store.h"
#include "stats/hypothesis_tests.h"

namespace liftlab::claims {

namespace fs = std::filesystem;
using stats::Alternative;
using stats::format_number;
using stats::format_p;

namespace {

constexpr double kClaimNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> values_of(const std::map<std::uint64_t, double>& m) {
    std::vector<double> v;
    for (const auto& [seed, x] : m) v.push_back(x);
    return v;
}

std::vector<double> logs(std::vector<double> v) {
    for (double& x : v) x = std::log(x);
    return v;
}

std::vector<double> shifted(std::vector<double> v, double by) {
    for (double& x : v) x += by;
    return v;
}

std::string mean_sd(const std::vector<double>& v) {
    if (v.empty()) return "–";
    if (v.size() == 1) return format_number(v.front());
    return format_number(stats::mean(v)) + " ± " + format_number(stats::sample_sd(v), 2);
}

std::string seed_counts(const std::vector<double>& a, const std::vector<double>& b) {
    return std::to_string(a.size()) + " / " + std::to_string(b.size());
}

std::string interval_text(double lo, double hi, bool ratio, const std::string& what) {
    auto show = [&](double v) { return format_number(ratio ? std::exp(v) : v); };
    return what + " [" + show(lo) + ", " + show(hi) + "]";
}

std::string needed_text(int64_t n) {
    if (n < 0) return "–";
    return "≈ " + std::to_string(n) + " seeds per method";
}

// Fewer than two finite values: no test.
bool too_few(const std::vector<double>& a, const std::vector<double>& b, Verdict& v,
             const Comparison& c) {
    if (a.size() >= 2 && b.size() >= 2) return false;
    v.verdict = "inconclusive";
    v.test = "none (fewer than 2 seeds with a value)";
    v.notes.push_back("fewer than 2 seeds with a finite " + c.metric + " for " +
                      (a.size() < 2 ? c.a : c.b) + ": no test");
    return true;
}

// Status counts that are not "ok" (diverged, failed …), as notes.
void note_statuses(const RunTable& t, const std::string& base, const std::string& at, Verdict& v) {
    for (const auto& [status, count] : t.statuses(base, at))
        if (status != "ok")
            v.notes.push_back(base + ": " + std::to_string(count) + " seed(s) " + status);
}

std::string direction_text(const Comparison& c, bool lower) {
    return c.a + (lower ? " < " : " > ") + c.b;
}

std::string scale_text(const Comparison& c) {
    return c.log_scale ? "log " + c.metric : c.metric;
}

// Time to the worse of the two final means, for the curves of a comparison.
void add_time_to_target(const Comparison& c, const RunTable& t, const std::vector<double>& a_raw,
                        const std::vector<double>& b_raw, Verdict& v) {
    if (a_raw.empty() || b_raw.empty()) return;
    const double ma = stats::mean(a_raw), mb = stats::mean(b_raw);
    const double target = c.lower_is_better ? std::max(ma, mb) : std::min(ma, mb);
    std::string text;
    for (const auto& method : {c.a, c.b}) {
        const std::string label = t.label_of(method, c.at);
        std::string dir;
        for (const auto& r : t.rows)
            if (r.label == label) dir = r.dir;
        if (label.empty() || dir.empty()) return;
        TimeToTarget tt;
        try {
            tt = time_to_target(dir, label, c.metric, target, c.lower_is_better);
        } catch (const std::exception&) {
            return;  // no readable curves: the final metric alone
        }
        if (tt.seeds == 0) return;  // a final-only metric (exit_rate, σ²_Jac)
        text += (text.empty() ? "" : "; ") + method + " " +
                (tt.reached ? format_number(tt.mean_steps) + " steps" : std::string("never")) +
                (tt.reached && std::isfinite(tt.mean_seconds)
                     ? " (" + format_number(tt.mean_seconds, 2) + " s)"
                     : "") +
                ", " + std::to_string(tt.reached) + "/" + std::to_string(tt.seeds) + " seeds";
    }
    v.time_to_target = c.metric + (c.lower_is_better ? " ≤ " : " ≥ ") + format_number(target) +
                       " (the worse final mean): " + text;
}

Verdict evaluate_scaled(const Claim& claim, const Comparison& c, const std::vector<double>& a_raw,
                        const std::vector<double>& b_raw, Verdict v);

Verdict evaluate_two_sample(const Claim& claim, const RunTable& t, bool curves) {
    const Comparison& c = claim.cmp;
    Verdict v;
    const auto a_raw = values_of(t.values(c.metric, c.a, c.at));
    const auto b_raw = values_of(t.values(c.metric, c.b, c.at));
    note_statuses(t, c.a, c.at, v);
    note_statuses(t, c.b, c.at, v);
    v.seeds = seed_counts(a_raw, b_raw);
    v.ours = c.a + " " + mean_sd(a_raw) + " vs " + c.b + " " + mean_sd(b_raw);
    auto positive = [](const std::vector<double>& x) {
        return std::all_of(x.begin(), x.end(), [](double y) { return y > 0; });
    };
    // A value ≤ 0 (an exit rate of 0, say) has no log: the test falls back to the metric itself.
    Comparison c_used = c;
    if (c.log_scale && !(positive(a_raw) && positive(b_raw))) {
        c_used.log_scale = false;
        if (claim.test != TestKind::Better) c_used.margin = 0;  // a relative margin has no meaning
        v.notes.push_back(c.metric + " has a value ≤ 0: tested on " + c.metric +
                          " itself, not its log");
    }
    if (c_used.log_scale && !a_raw.empty() && !b_raw.empty())
        v.ours += "; ratio of geometric means " +
                  format_number(std::exp(stats::mean(logs(a_raw)) - stats::mean(logs(b_raw))));
    if (curves) add_time_to_target(c, t, a_raw, b_raw, v);
    if (too_few(a_raw, b_raw, v, c)) return v;
    return evaluate_scaled(claim, c_used, a_raw, b_raw, v);
}

Verdict evaluate_scaled(const Claim& claim, const Comparison& c, const std::vector<double>& a_raw,
                        const std::vector<double>& b_raw, Verdict v) {
    const auto x = c.log_scale ? logs(a_raw) : a_raw;
    const auto y = c.log_scale ? logs(b_raw) : b_raw;
    const bool lower = c.lower_is_better;
    const Alternative hold = lower ? Alternative::Less : Alternative::Greater;
    const Alternative against = lower ? Alternative::Greater : Alternative::Less;
    const double sx = stats::sample_sd(x), sy = stats::sample_sd(y);
    const std::string level = ", α = " + format_number(kAlpha);

    if (claim.test == TestKind::Better) {
        const auto t_hold = stats::welch_t_test(x, y, hold);
        const auto t_against = stats::welch_t_test(x, y, against);
        const auto two = stats::welch_t_test(x, y, Alternative::TwoSided);
        const double mw = stats::mann_whitney_u(x, y, hold).p;
        v.p = t_hold.p;
        v.test = "Welch t on " + scale_text(c) + ", one-sided (" + direction_text(c, lower) + ")" +
                 level + "; Mann–Whitney p = " + format_p(mw);
        v.interval = interval_text(two.ci_low, two.ci_high, c.log_scale,
                                   c.log_scale ? "95 % CI of the ratio" : "95 % CI of a − b");
        if (t_hold.p < kAlpha) {
            v.verdict = "holds";
        } else if (t_against.p < kAlpha) {
            v.verdict = "refuted";
        } else {
            v.verdict = "inconclusive";
            v.needed = needed_text(
                stats::seeds_for_power(std::abs(two.estimate), sx, sy, kAlpha, kPower, true));
        }
        return v;
    }

    // Margins: relative ones on the log scale.
    const double m = c.log_scale ? std::log1p(c.margin) : c.margin;
    const std::string margin_text =
        c.log_scale ? format_number(100 * c.margin) + " %" : format_number(c.margin);
    if (claim.test == TestKind::NonInferior) {
        // a − b beyond the margin in the bad direction is the null.
        const double shift = lower ? m : -m;
        const auto yb = shifted(y, shift);
        const auto t_hold = stats::welch_t_test(x, yb, hold);
        const auto t_against = stats::welch_t_test(x, yb, against);
        const auto two = stats::welch_t_test(x, y, Alternative::TwoSided);
        v.p = t_hold.p;
        v.test = "Welch t on " + scale_text(c) + ", non-inferiority margin " + margin_text +
                 ", one-sided (" + c.a + (lower ? " < " : " > ") + c.b +
                 (lower ? " + margin" : " − margin") + ")" + level;
        v.interval = interval_text(two.ci_low, two.ci_high, c.log_scale,
                                   c.log_scale ? "95 % CI of the ratio" : "95 % CI of a − b");
        if (t_hold.p < kAlpha) {
            v.verdict = "holds";
        } else if (t_against.p < kAlpha) {
            v.verdict = "refuted";
        } else {
            v.verdict = "inconclusive";
            v.needed = needed_text(
                stats::seeds_for_power(std::abs(t_hold.estimate), sx, sy, kAlpha, kPower, true));
        }
        return v;
    }

    // Equivalent: two one-sided tests against ±m.
    const auto low = stats::welch_t_test(x, shifted(y, -m), Alternative::Greater);  // a − b > −m
    const auto high = stats::welch_t_test(x, shifted(y, m), Alternative::Less);     // a − b < m
    const auto above = stats::welch_t_test(x, shifted(y, m), Alternative::Greater);
    const auto below = stats::welch_t_test(x, shifted(y, -m), Alternative::Less);
    const auto ninety = stats::welch_t_test(x, y, Alternative::TwoSided, 1 - 2 * kAlpha);
    v.p = std::max(low.p, high.p);
    v.test = "two one-sided Welch t-tests (TOST) on " + scale_text(c) + ", margin ±" + margin_text +
             level;
    v.interval = interval_text(ninety.ci_low, ninety.ci_high, c.log_scale,
                               c.log_scale ? "90 % CI of the ratio" : "90 % CI of a − b");
    if (v.p < kAlpha) {
        v.verdict = "holds";
    } else if (above.p < kAlpha || below.p < kAlpha) {
        v.verdict = "refuted";
        const bool a_higher = above.p < kAlpha;
        const bool a_worse = a_higher == lower;
        v.notes.push_back(c.a + (a_worse ? " is worse than " : " beats ") + c.b +
                          " by more than the margin (one-sided p = " +
                          format_p(a_higher ? above.p : below.p) + ")");
    } else {
        v.verdict = "inconclusive";
        const double est = std::abs(ninety.estimate);
        v.needed = needed_text(
            stats::seeds_for_power(est < m ? m - est : est - m, sx, sy, kAlpha, kPower, true));
    }
    return v;
}

Verdict evaluate_cross_covariance(const Claim& claim, const RunTable& t) {
    const Comparison& c = claim.cmp;
    Verdict v;
    struct Cell {
        std::string method;
        bool structural = false, exact_zero = false, tested = false;
        std::vector<double> sigma, p, z, theta, p_theta, spread;
        double fisher = kClaimNaN, fisher_theta = kClaimNaN;
        // "Vanishes", shown: TOST of the seeds' σ²_Jac / |lifter's mean σ²_Jac| within
        // ±kVanishMargin (NaN: not computed, fewer than 2 seeds or no lifter value).
        double tost = kClaimNaN, ratio_mean = kClaimNaN, ratio_sd = kClaimNaN;
        int below = 0;
    };
    std::vector<Cell> cells;
    std::vector<std::string> methods = {c.a};
    methods.insert(methods.end(), c.variants.begin(), c.variants.end());
    for (const auto& m : methods) {
        Cell cell;
        cell.method = m;
        note_statuses(t, m, c.at, v);
        const auto slack = values_of(t.values("slack", m, c.at));
        cell.sigma = values_of(t.values("sigma2_jac", m, c.at));
        cell.theta = values_of(t.values("sigma2_jac_theta", m, c.at));
        cell.p_theta = values_of(t.values("p_value_theta", m, c.at));
        cell.spread = values_of(t.values("iterate_spread", m, c.at));
        if (!slack.empty() &&
            std::all_of(slack.begin(), slack.end(), [](double s) { return s == 0; })) {
            cell.structural = true;
        } else {
            const auto pmap = t.values("p_value", m, c.at);
            const auto sdmap = t.values("sigma2_jac_null_sd", m, c.at);
            const auto smap = t.values("sigma2_jac", m, c.at);
            cell.p = values_of(pmap);
            for (const auto& [seed, s] : smap)
                if (auto it = sdmap.find(seed); it != sdmap.end() && it->second > 0)
                    cell.z.push_back(s / it->second);
            cell.exact_zero =
                !cell.sigma.empty() &&
                std::all_of(cell.sigma.begin(), cell.sigma.end(), [](double s) { return s == 0; });
            if (!cell.p.empty()) {
                cell.fisher = stats::fisher_combined(cell.p).p;
                cell.tested = true;
                for (double p : cell.p) cell.below += p < kAlpha ? 1 : 0;
            }
        }
        if (!cell.p_theta.empty()) cell.fisher_theta = stats::fisher_combined(cell.p_theta).p;
        cells.push_back(cell);
    }
    const Cell& full = cells.front();
    v.seeds = std::to_string(full.sigma.size()) + " per method";
    v.test =
        "per method, Fisher's method over the seeds' permutation p-values (p = (1 + #)/(1 + N)); "
        "the lifter at α = " +
        format_number(kAlpha) +
        ", each ablation at α/k (Bonferroni over the k ablations with a slack)";
    int k = 0;
    for (size_t i = 1; i < cells.size(); ++i) k += cells[i].tested ? 1 : 0;
    const double full_abs = full.sigma.empty() ? kClaimNaN : stats::mean(full.sigma);
    v.test += "; an ablation vanishes when its mean σ²_Jac is shown within ±" +
              format_number(100 * kVanishMargin) +
              " % of the lifter's |mean σ²_Jac| (two one-sided t-tests over the seeds, TOST, "
              "each at α; a structural or exact 0 needs none)";
    for (size_t i = 1; i < cells.size(); ++i) {
        Cell& cell = cells[i];
        if (!cell.tested || cell.exact_zero || cell.sigma.size() < 2 || !std::isfinite(full_abs) ||
            full_abs == 0)
            continue;
        std::vector<double> r;
        for (double x : cell.sigma) r.push_back(x / std::abs(full_abs));
        cell.ratio_mean = stats::mean(r);
        cell.ratio_sd = stats::sample_sd(r);
        cell.tost = std::max(stats::one_sample_t_test(r, -kVanishMargin, Alternative::Greater).p,
                             stats::one_sample_t_test(r, kVanishMargin, Alternative::Less).p);
    }
    std::string ours;
    bool variant_significant = false;
    double worst_variant_p = 1;
    for (const auto& cell : cells) {
        std::string s = cell.method + " ";
        if (cell.structural) {
            s += "structural 0 (no slack)";
        } else if (cell.exact_zero) {
            s += "exactly 0 on every seed (p = 1)";
        } else if (cell.tested) {
            s += mean_sd(cell.sigma) + " (" + std::to_string(cell.below) + "/" +
                 std::to_string(cell.p.size()) + " seeds p < 0.05, binomial p = " +
                 format_p(stats::binomial_test(cell.below, static_cast<int64_t>(cell.p.size()),
                                               kAlpha, Alternative::Greater)) +
                 "; Fisher p = " + format_p(cell.fisher) + ")";
            if (&cell != &full && std::isfinite(full_abs) && full_abs != 0)
                s += ", " + format_number(100 * std::abs(stats::mean(cell.sigma) / full_abs), 2) +
                     " % of the lifter's |σ²_Jac|";
            if (std::isfinite(cell.tost)) s += ", TOST p = " + format_p(cell.tost);
        } else {
            s += "no value";
        }
        ours += (ours.empty() ? "" : "; ") + s;
        if (&cell != &full && cell.tested) {
            worst_variant_p = std::min(worst_variant_p, cell.fisher);
            if (cell.fisher < kAlpha / std::max(1, k)) variant_significant = true;
        }
        // The fixed-iterate reading beside it: the curvature term's share (methods.md §4.1).
        if (!cell.theta.empty() && !cell.structural && !cell.exact_zero)
            v.notes.push_back(cell.method + ": σ²_Jac at a fixed iterate (θ̃-gradient) " +
                              mean_sd(cell.theta) + ", Fisher p = " + format_p(cell.fisher_theta) +
                              "; iterate spread tr Σ_θ̃ " + mean_sd(cell.spread));
    }
    v.ours = ours;
    v.p = full.fisher;
    if (!full.tested) {
        v.verdict = "inconclusive";
        v.notes.push_back(c.a + " has no σ²_Jac p-values: no test");
        return v;
    }
    if (variant_significant) {
        v.verdict = "refuted";
        v.p = worst_variant_p;
        v.notes.push_back("an ablation with a slack has a non-zero σ²_Jac (Fisher p = " +
                          format_p(worst_variant_p) + " < α/" + std::to_string(std::max(1, k)) +
                          "): 'only the full lifter' does not hold as stated");
    } else if (full.fisher < kAlpha) {
        // Not distinguishable from 0 is not shown to vanish: each ablation with a slack must be
        // within the margin by its own test.
        std::vector<std::string> unshown;
        int64_t needed = 0;
        for (size_t i = 1; i < cells.size(); ++i) {
            const Cell& cell = cells[i];
            if (!cell.tested || cell.exact_zero || cell.tost < kAlpha) continue;
            unshown.push_back(cell.method);
            const double gap = kVanishMargin - std::abs(cell.ratio_mean);
            if (std::isfinite(cell.tost) && gap > 0 && cell.ratio_sd > 0)
                needed = std::max(needed, stats::seeds_for_power_one_sample(gap, cell.ratio_sd,
                                                                            kAlpha, kPower, true));
        }
        if (unshown.empty()) {
            v.verdict = "holds";
        } else {
            v.verdict = "inconclusive";
            std::string names;
            for (const auto& n : unshown) names += (names.empty() ? "" : ", ") + n;
            v.notes.push_back(names + ": not distinguishable from 0, nor shown within ±" +
                              format_number(100 * kVanishMargin) +
                              " % of the lifter's |σ²_Jac| (TOST p ≥ α): 'vanishes' is not shown");
            if (needed > 0) v.needed = needed_text(needed);
        }
    } else {
        v.verdict = "inconclusive";
        if (full.z.size() >= 2)
            v.needed = needed_text(stats::seeds_for_power_one_sample(
                std::abs(stats::mean(full.z)), stats::sample_sd(full.z), kAlpha, kPower, false));
    }
    v.interval = "";
    return v;
}

Verdict evaluate_basin(const Claim& claim, const RunTable& t) {
    const Comparison& c = claim.cmp;
    Verdict v;
    const auto a = values_of(t.values(c.metric, c.a, c.at));
    const auto b = values_of(t.values(c.metric, c.b, c.at));
    note_statuses(t, c.a, c.at, v);
    note_statuses(t, c.b, c.at, v);
    v.seeds = seed_counts(a, b);
    auto summary = [](const std::string& name, std::vector<double> x) {
        if (x.empty()) return name + " –";
        std::sort(x.begin(), x.end());
        const double median =
            x.size() % 2 ? x[x.size() / 2] : 0.5 * (x[x.size() / 2 - 1] + x[x.size() / 2]);
        return name + " median " + format_number(median) + " [" + format_number(x.front()) + ", " +
               format_number(x.back()) + "]";
    };
    if (too_few(a, b, v, c)) {
        v.ours = summary(c.a, a) + "; " + summary(c.b, b);
        return v;
    }
    std::vector<double> pooled(a);
    pooled.insert(pooled.end(), b.begin(), b.end());
    const double cut = stats::basin_threshold(pooled);
    const double mw = stats::mann_whitney_u(a, b, Alternative::Less).p;
    if (!std::isfinite(cut)) {
        v.ours = "one mode (no separate basin); " + summary(c.a, a) + "; " + summary(c.b, b);
        v.test = "Mann–Whitney U on the final " + c.metric + ", one-sided (" + c.a + " < " + c.b +
                 "), α = " + format_number(kAlpha);
        v.p = mw;
        const double against = stats::mann_whitney_u(a, b, Alternative::Greater).p;
        v.verdict = mw < kAlpha ? "holds" : against < kAlpha ? "refuted" : "inconclusive";
        if (v.verdict == "inconclusive")
            v.needed = needed_text(stats::seeds_for_power(std::abs(stats::mean(a) - stats::mean(b)),
                                                          stats::sample_sd(a), stats::sample_sd(b),
                                                          kAlpha, kPower, true));
        return v;
    }
    auto inside = [&](const std::vector<double>& x) {
        return static_cast<int64_t>(
            std::count_if(x.begin(), x.end(), [&](double y) { return y < cut; }));
    };
    const int64_t ka = inside(a), kb = inside(b);
    const int64_t na = static_cast<int64_t>(a.size()), nb = static_cast<int64_t>(b.size());
    v.ours = "in the basin (" + c.metric + " < " + format_number(cut, 4) + "): " + c.a + " " +
             std::to_string(ka) + "/" + std::to_string(na) + ", " + c.b + " " + std::to_string(kb) +
             "/" + std::to_string(nb) + "; " + summary(c.a, a) + "; " + summary(c.b, b);
    v.test = "basin = antimode of the pooled KDE; Fisher's exact test on the shares, one-sided (" +
             c.a + " more often), α = " + format_number(kAlpha) +
             "; Mann–Whitney p = " + format_p(mw);
    v.p = stats::fisher_exact_test(ka, na - ka, kb, nb - kb, Alternative::Greater);
    const double against = stats::fisher_exact_test(ka, na - ka, kb, nb - kb, Alternative::Less);
    const auto ca = stats::clopper_pearson(ka, na), cb = stats::clopper_pearson(kb, nb);
    v.interval = "95 % Clopper–Pearson: " + c.a + " [" + format_number(ca.first, 2) + ", " +
                 format_number(ca.second, 2) + "], " + c.b + " [" + format_number(cb.first, 2) +
                 ", " + format_number(cb.second, 2) + "]";
    if (v.p < kAlpha) {
        v.verdict = "holds";
    } else if (against < kAlpha) {
        v.verdict = "refuted";
    } else {
        v.verdict = "inconclusive";
        const double pa = static_cast<double>(ka) / na, pb = static_cast<double>(kb) / nb;
        v.needed = needed_text(stats::seeds_for_power(
            pa - pb, std::sqrt(pa * (1 - pa)), std::sqrt(pb * (1 - pb)), kAlpha, kPower, true));
    }
    return v;
}

}  // namespace

std::map<std::uint64_t, double> RunTable::values(const std::string& metric,
                                                 const std::string& base_label,
                                                 const std::string& at_value) const {
    std::map<std::uint64_t, double> out;
    for (const auto& r : rows) {
        if (r.base != base_label || r.at != at_value || r.status != "ok") continue;
        const auto it = r.final.find(metric);
        if (it != r.final.end() && std::isfinite(it->second)) out[r.seed] = it->second;
    }
    return out;
}

std::string RunTable::label_of(const std::string& base_label, const std::string& at_value) const {
    for (const auto& r : rows)
        if (r.base == base_label && r.at == at_value) return r.label;
    return "";
}

std::map<std::string, int> RunTable::statuses(const std::string& base_label,
                                              const std::string& at_value) const {
    std::map<std::string, int> out;
    for (const auto& r : rows)
        if (r.base == base_label && r.at == at_value) ++out[r.status];
    return out;
}

RunTable read_run_table(const std::string& run_dir) {
    RunTable t;
    t.dir = run_dir;
    const std::string summary_path = (fs::path(run_dir) / run_folder::kSummary).string();
    const SummaryRecord summary = read_summary_json(summary_path);
    if (!summary.runs_list) throw DataError(summary_path, 0, "has no \"runs\" array");
    const std::string spec_path = (fs::path(run_dir) / run_folder::kSpec).string();
    if (fs::exists(spec_path)) {
        try {
            const SpecRecord spec = read_spec_json(spec_path);
            t.preset = spec.name;
            const auto versions = spec.json.find("versions");
            if (versions != spec.json.end() && versions->is_object()) {
                const auto core = versions->find("blas_core");
                if (core != versions->end() && core->is_string())
                    t.blas_core = core->get<std::string>();
            }
        } catch (const DataError&) {
            // The spec's name and BLAS core are informative only.
        }
    }
    for (const auto& e : summary.runs) {
        if (!e.json.is_object()) continue;
        RunTable::Row r;
        r.dir = run_dir;
        r.label = e.method;
        r.status = e.status;
        if (e.seed) r.seed = *e.seed;
        r.base = r.label;
        if (e.sweep_value) {
            const auto& sv = *e.sweep_value;
            r.at = sv.is_string()
                       ? sv.get<std::string>()
                       : sv.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            std::replace(r.at.begin(), r.at.end(), ',', ' ');  // as the label's suffix
            if (const auto at = r.label.rfind('@'); at != std::string::npos)
                r.base = r.label.substr(0, at);
        }
        r.final = e.final;
        t.rows.push_back(std::move(r));
    }
    return t;
}

RunTable merge_tables(const std::vector<RunTable>& tables) {
    RunTable out;
    std::set<std::pair<std::string, std::string>> seen;  // (base, at) already taken
    for (const auto& t : tables) {
        if (out.dir.empty()) out.dir = t.dir;
        if (out.blas_core.empty()) out.blas_core = t.blas_core;
        std::set<std::pair<std::string, std::string>> here;
        for (const auto& r : t.rows) {
            const auto key = std::make_pair(r.base, r.at);
            if (seen.count(key)) continue;
            here.insert(key);
            out.rows.push_back(r);
        }
        seen.insert(here.begin(), here.end());
    }
    return out;
}

TimeToTarget time_to_target(const std::string& run_dir, const std::string& label,
                            const std::string& metric, double target, bool lower_is_better) {
    const auto rows = read_metrics_csv((fs::path(run_dir) / run_folder::kMetrics).string());
    struct Point {
        double value = kClaimNaN, seconds = kClaimNaN;
    };
    std::map<std::uint64_t, std::map<int, Point>> by_seed;  // seed → step → point
    for (const auto& r : rows) {
        if (r.method != label) continue;
        if (r.metric == metric) by_seed[r.seed][r.step].value = r.value;
        if (r.metric == "time_s") by_seed[r.seed][r.step].seconds = r.value;
    }
    TimeToTarget out;
    double steps = 0, seconds = 0;
    int timed = 0;
    for (const auto& [seed, curve] : by_seed) {
        bool has_metric = false;
        for (const auto& [step, point] : curve)
            has_metric = has_metric || std::isfinite(point.value);
        if (!has_metric) continue;
        ++out.seeds;
        for (const auto& [step, point] : curve) {
            const double x = point.value;
            if (!std::isfinite(x)) continue;
            if (lower_is_better ? x <= target : x >= target) {
                ++out.reached;
                steps += step;
                if (std::isfinite(point.seconds)) {
                    seconds += point.seconds;
                    ++timed;
                }
                break;
            }
        }
    }
    if (out.reached > 0) out.mean_steps = steps / out.reached;
    if (timed > 0 && timed == out.reached) out.mean_seconds = seconds / timed;
    return out;
}

Verdict evaluate_claim(const Claim& claim, const RunTable& table, bool curves) {
    switch (claim.test) {
        case TestKind::CrossCovariance:
            return evaluate_cross_covariance(claim, table);
        case TestKind::Basin:
            return evaluate_basin(claim, table);
        default:
            return evaluate_two_sample(claim, table, curves);
    }
}

}  // namespace liftlab::claims
