// The claims table as data (`liftlab-cli claims`, docs/cli.md): each claim of the two
// technical summaries LiftLab started from, the runs that test it at each tier, the statistic and
// the test its verdict rests on, and the paper's number. One entry per claim in
// claim_registry.cpp; adding a claim is one more entry.
#pragma once
#include <string>
#include <vector>

namespace liftlab::claims {

// tiny: the test suite's seconds-long version (the table's shape only, numbers meaningless);
// fast: minutes on two cores, every claim at a reduced budget named in its row; full: the
// paper-level budgets and seeds.
enum class Tier { Tiny, Fast, Full };
const char* to_string(Tier tier);
Tier parse_tier(const std::string& text);  // throws std::invalid_argument naming the choices

// One run: a preset (or spec file) with `--set` overrides and seeds 0 … seeds − 1.
struct Recipe {
    std::string preset;             // empty: the claim is not run at this tier
    std::vector<std::string> sets;  // key=value, applied in order after the preset
    int seeds = 3;
    bool runs() const { return !preset.empty(); }
};

enum class TestKind {
    // a better than b: Welch's t, one-sided, on the metric (its log when log_scale); refuted when
    // the opposite one-sided test rejects.
    Better,
    // a not worse than b by more than `margin`: Welch's t against the shifted margin, one-sided.
    NonInferior,
    // |a − b| within ±margin: two one-sided tests (TOST); refuted when a one-sided test finds the
    // difference beyond the margin.
    Equivalent,
    // Theorem 1: a (the full lifter) has a non-zero σ²_Jac and none of the `variants` with a
    // slack has: per method, Fisher's method over the seeds' permutation p-values.
    CrossCovariance,
    // a lands in the low-loss basin more often than b: the basin from the pooled final losses
    // (stats::basin_threshold), Fisher's exact test on the shares; one mode: Mann–Whitney.
    Basin,
};
const char* to_string(TestKind kind);

struct Comparison {
    std::string metric;  // final metric (summary.json "final")
    std::string a, b;    // method labels without a sweep suffix
    std::string at;      // the sweep value compared, as its label text ("4"); "" without a sweep
    bool lower_is_better = true;
    bool log_scale = true;  // compare log values (ratios); the metric must be positive
    // NonInferior / Equivalent: relative (0.1 = 10 %) on a log scale, absolute otherwise.
    double margin = 0;
    std::vector<std::string> variants;  // CrossCovariance: the ablations of a
};

// One compared method's tuning grid: each setting a list of key=value overrides. Every method of
// a claim gets the same number of settings.
struct TuneAxis {
    std::string method;
    std::vector<std::vector<std::string>> settings;
};
struct Tuning {
    std::vector<TuneAxis> axes;  // empty: the claim is not tuned
    std::string select_metric;   // read on the validation split (task.split=validation)
    bool select_lower_is_better = true;
    int seeds = 3;        // seeds per setting while tuning
    int final_seeds = 0;  // seeds of the runs at the best settings (0: the tier's)
    bool tuned() const { return !axes.empty(); }
};

struct Claim {
    std::string id;     // stable key: --only, --reuse, the csv
    std::string text;   // the claim as the summaries state it
    std::string paper;  // the paper's number or statement
    TestKind test = TestKind::Better;
    Comparison cmp;
    Recipe tiny, fast, full;
    std::string figure;  // the key figure: figures/<figure>.png of the run
    Tuning tuning;       // the fair comparison (full tier, or --tune)
    const Recipe& recipe(Tier tier) const;
};

const std::vector<Claim>& claim_registry();
const Claim* find_claim(const std::string& id);

// The significance level of every verdict and the power of the seed-count estimates.
inline constexpr double kAlpha = 0.05;
inline constexpr double kPower = 0.8;
// Theorem 1's "σ²_Jac vanishes" for an ablation: its mean within ±10 % of the full lifter's
// |mean σ²_Jac|, shown by an equivalence test (claim_evaluation.cpp), not assumed from a test
// that failed to reject 0.
inline constexpr double kVanishMargin = 0.10;

}  // namespace liftlab::claims
