// The many-class stand-in (data/class_mixture.h): the nearest-centre rate against the two-class
// Bayes rate, uniform labels and the within-class spread (each within kStdErrors standard errors
// of its seeded sample), the problem fixed by data_seed alone, the data set's one-hot targets,
// the spec's named errors, and a short run where every head learns well above chance.
#include <gtest/gtest.h>

#include <cmath>

#include "data/class_mixture.h"
#include "data/dataset.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/runner.h"

using liftlab::test::kStdErrors;
using nlohmann::json;

namespace {

liftlab::TaskSpec mixture_task(int classes, int dim, double sd, int n_train, int n_test = 1000) {
    liftlab::TaskSpec t;
    t.kind = "class-mixture";
    t.output_dim = classes;
    t.input_dim = dim;
    t.noise = sd;
    t.teacher_hidden = {32};
    t.n_train = n_train;
    t.n_test = n_test;
    t.data_seed = 11;
    return t;
}

}  // namespace

TEST(ClassMixture, NearestCentreRateIsTheTwoClassBayesRate) {
    // Two isotropic Gaussians at distance Δ, sd σ, equal priors: the Bayes (nearest-centre) rule
    // is right with probability Φ(Δ / 2σ).
    for (const double sd : {0.7, 1.5}) {
        const auto task = mixture_task(2, 4, sd, 40000);
        const auto m = liftlab::draw_class_mixture(task);
        const double gap = (m.centres[0] - m.centres[1]).norm().item<double>();
        const double bayes = liftlab::test::normal_cdf(gap / (2.0 * sd));
        const double n = static_cast<double>(m.labels.numel());
        const double se = std::sqrt(bayes * (1.0 - bayes) / n);
        EXPECT_NEAR(liftlab::nearest_centre_accuracy(m.latents, m.labels, m.centres), bayes,
                    kStdErrors * se + 1e-12)
            << "sd " << sd << ", Δ " << gap;
    }
}

TEST(ClassMixture, LabelsAreUniformAndLatentsSpreadBySigmaAroundTheirCentre) {
    const int classes = 10;
    const double sd = 0.8;
    const auto m = liftlab::draw_class_mixture(mixture_task(classes, 6, sd, 50000));
    const double n = static_cast<double>(m.labels.numel()), p = 1.0 / classes;
    const auto counts = torch::bincount(m.labels, {}, classes);
    ASSERT_EQ(counts.numel(), classes);
    for (int c = 0; c < classes; ++c)
        EXPECT_NEAR(counts[c].item<double>(), n * p, kStdErrors * std::sqrt(n * p * (1 - p)))
            << "class " << c;
    const auto eps = m.latents - m.centres.index_select(0, m.labels);  // σ ε, n × D
    const double cells = static_cast<double>(eps.numel());
    EXPECT_NEAR(eps.mean().item<double>(), 0.0, kStdErrors * sd / std::sqrt(cells));
    // Var of a sample variance of a Gaussian: 2σ⁴ / (N − 1).
    EXPECT_NEAR(eps.var().item<double>(), sd * sd,
                kStdErrors * sd * sd * std::sqrt(2.0 / (cells - 1)));
    // The warp moves inputs by a bounded, non-zero amount (tanh is bounded).
    const auto shift = (m.inputs - m.latents).abs();
    EXPECT_GT(shift.mean().item<double>(), 1e-3);
    EXPECT_TRUE(torch::isfinite(m.inputs).all().item<bool>());
}

TEST(ClassMixture, InputsAreTheStatedWarpOfTheLatentsWithFanInScaledWeights) {
    // x = u + tanh(u A + a) B, A: D × h and B: h × D with N(0, 1/fan_in) entries, a ~ 0.1 N(0, 1).
    const int dim = 24, hidden = 32;  // mixture_task's teacher_hidden = {32}
    const auto m = liftlab::draw_class_mixture(mixture_task(4, dim, 1.0, 500));
    ASSERT_EQ(m.warp_in.sizes(), (torch::IntArrayRef{dim, hidden}));
    ASSERT_EQ(m.warp_out.sizes(), (torch::IntArrayRef{hidden, dim}));
    const auto expected =
        m.latents + torch::tanh(m.latents.matmul(m.warp_in) + m.warp_bias).matmul(m.warp_out);
    EXPECT_LT((m.inputs - expected).abs().max().item<double>(), 1e-12);
    // Each variance against its target, 5 standard errors of a Gaussian sample variance.
    const auto near_variance = [](const torch::Tensor& w, double var, const char* what) {
        const double cells = static_cast<double>(w.numel());
        EXPECT_NEAR(w.var().item<double>(), var, kStdErrors * var * std::sqrt(2.0 / (cells - 1)))
            << what;
    };
    near_variance(m.warp_in, 1.0 / dim, "A");
    near_variance(m.warp_out, 1.0 / hidden, "B");
    near_variance(m.warp_bias, 0.01, "a");
}

TEST(ClassMixture, TheProblemDependsOnTheDataSeedAloneNotOnTheSampleCounts) {
    const auto a = liftlab::draw_class_mixture(mixture_task(7, 5, 1.0, 300));
    const auto b = liftlab::draw_class_mixture(mixture_task(7, 5, 1.0, 900, 50));
    EXPECT_TRUE(torch::equal(a.centres, b.centres));
    const auto again = liftlab::draw_class_mixture(mixture_task(7, 5, 1.0, 300));
    EXPECT_TRUE(torch::equal(a.inputs, again.inputs));
    EXPECT_TRUE(torch::equal(a.labels, again.labels));
    auto other = mixture_task(7, 5, 1.0, 300);
    other.data_seed = 12;
    EXPECT_FALSE(torch::equal(a.centres, liftlab::draw_class_mixture(other).centres));
    EXPECT_THROW(liftlab::draw_class_mixture(mixture_task(1, 5, 1.0, 10)), std::invalid_argument);
}

TEST(ClassMixture, DataSetHasOneHotTargetsOfItsLabels) {
    const auto task = mixture_task(5, 3, 1.0, 200, 80);
    const auto d = liftlab::make_dataset(task);
    EXPECT_TRUE(d.classification());
    EXPECT_EQ(d.num_classes, 5);
    EXPECT_EQ(d.x_train.sizes(), (torch::IntArrayRef{200, 3}));
    EXPECT_EQ(d.x_test.sizes(), (torch::IntArrayRef{80, 3}));
    EXPECT_EQ(d.x_train.scalar_type(), torch::kFloat32);
    EXPECT_EQ(d.y_train.sizes(), (torch::IntArrayRef{200, 5}));
    EXPECT_TRUE(torch::equal(d.y_train.argmax(1), d.labels_train));
    EXPECT_TRUE(torch::equal(d.y_test.sum(1), torch::ones({80})));
    const auto m = liftlab::draw_class_mixture(task);
    EXPECT_TRUE(torch::equal(d.x_test, m.inputs.narrow(0, 200, 80).to(torch::kFloat32)));
    // The ceiling it carries: the nearest-centre rule on the test rows' latents.
    ASSERT_EQ(d.reference.count("bayes_accuracy"), 1u);
    EXPECT_DOUBLE_EQ(d.reference.at("bayes_accuracy"),
                     liftlab::nearest_centre_accuracy(m.latents.narrow(0, 200, 80),
                                                      m.labels.narrow(0, 200, 80), m.centres));
}

TEST(ClassMixture, SpecNamesTheKeyOfABadTask) {
    const auto spec_with = [](const std::string& task, const std::string& backbone) {
        return json::parse(R"({"task": )" + task + R"(, "backbone": )" + backbone +
                           R"(, "methods": [{"name": "ce"}], "steps": 2, "batch_size": 4})");
    };
    const std::string ok = R"({"kind": "class-mixture", "output_dim": 3, "n_train": 16})";
    EXPECT_NO_THROW(liftlab::parse_spec(spec_with(ok, R"({"kind": "mlp"})")));
    const auto key_of = [&](const std::string& task, const std::string& backbone) {
        try {
            liftlab::parse_spec(spec_with(task, backbone));
        } catch (const liftlab::SpecError& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    EXPECT_NE(key_of(R"({"kind": "class-mixture", "output_dim": 1})", R"({})").find("output_dim"),
              std::string::npos);
    EXPECT_NE(key_of(R"({"kind": "class-mixture", "n_train": 0})", R"({})").find("n_train"),
              std::string::npos);
    EXPECT_NE(key_of(R"({"kind": "class-mixture", "noise": 0})", R"({})").find("noise"),
              std::string::npos);
    EXPECT_NE(key_of(ok, R"({"kind": "cnn"})").find("backbone.kind"), std::string::npos);
}

TEST(ClassMixture, EveryHeadLearnsFarAboveChance) {
    // Five well-separated classes (nearest-centre rate ≈ 0.97 here): 300 steps take every head
    // far above the 0.2 of guessing.
    const auto spec = liftlab::parse_spec(json::parse(R"({
        "name": "mixture",
        "task": {"kind": "class-mixture", "input_dim": 8, "output_dim": 5, "noise": 0.6,
                 "teacher_hidden": [16], "n_train": 2000, "n_test": 500},
        "backbone": {"hidden": [32], "feature_dim": 16},
        "methods": [{"name": "ce"}, {"name": "adam", "lr": 0.003},
                    {"name": "cf-prox", "lambda": 10.0}],
        "optimizer": {"kind": "adam", "lr": 0.003},
        "batch_size": 32, "steps": 300, "log_every": 300, "threads": 1})"));
    const auto m = liftlab::draw_class_mixture(spec.task);
    const double ceiling = liftlab::nearest_centre_accuracy(
        m.latents.narrow(0, 2000, 500), m.labels.narrow(0, 2000, 500), m.centres);
    ASSERT_GT(ceiling, 0.9);
    const auto r = liftlab::run_experiment(spec, {});
    ASSERT_EQ(r.runs.size(), 3u);
    for (const auto& run : r.runs) {
        EXPECT_EQ(run.status, "ok") << run.method;
        EXPECT_GT(run.final_metrics.at("test_accuracy"), 0.7) << run.method;
        EXPECT_LE(run.final_metrics.at("test_accuracy"), 1.0) << run.method;
        // The ceiling is reported beside every method's result.
        ASSERT_EQ(run.final_metrics.count("bayes_accuracy"), 1u) << run.method;
        EXPECT_DOUBLE_EQ(run.final_metrics.at("bayes_accuracy"), ceiling) << run.method;
    }
}
