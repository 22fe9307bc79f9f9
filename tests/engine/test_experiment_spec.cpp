// Spec validation: every bad spec is an error whose message names the key.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"

using liftlab::apply_override;
using liftlab::parse_spec;
using liftlab::SpecError;
using nlohmann::json;

namespace {

json minimal() {
    return json::parse(R"({"name": "t", "methods": [{"name": "cf-prox", "lambda": 2.0},
                                                      {"name": "adam", "lr": 0.001}]})");
}

// Parses and returns the SpecError's key and message; fails the test when parsing succeeds.
std::pair<std::string, std::string> spec_error(const json& j) {
    try {
        parse_spec(j);
    } catch (const SpecError& e) {
        return {e.key(), e.what()};
    }
    ADD_FAILURE() << "expected a SpecError for " << j.dump();
    return {};
}

}  // namespace

TEST(ExperimentSpec, MinimalSpecGetsDefaults) {
    auto s = parse_spec(minimal());
    EXPECT_EQ(s.methods.size(), 2u);
    EXPECT_EQ(s.methods[0].label, "cf-prox");
    EXPECT_DOUBLE_EQ(s.methods[0].lambda, 2.0);
    EXPECT_EQ(s.batch_size, 32);
    EXPECT_EQ(s.step_order, "backbone-first");
}

TEST(ExperimentSpec, RoundTripsThroughJson) {
    auto s = parse_spec(minimal());
    auto j = liftlab::to_json(s);
    EXPECT_EQ(liftlab::to_json(parse_spec(j)), j);
}

TEST(ExperimentSpec, UnknownKeyIsNamed) {
    auto j = minimal();
    j["batch_sise"] = 8;
    auto [key, msg] = spec_error(j);
    EXPECT_EQ(key, "batch_sise");
    EXPECT_NE(msg.find("unknown key"), std::string::npos) << msg;

    j = minimal();
    j["task"] = {{"nosie", 0.1}};
    EXPECT_EQ(spec_error(j).first, "task.nosie");

    j = minimal();
    j["methods"][1]["lamda"] = 1.0;
    EXPECT_EQ(spec_error(j).first, "methods[1].lamda");
}

TEST(ExperimentSpec, WrongTypeIsNamed) {
    auto j = minimal();
    j["steps"] = "many";
    auto [key, msg] = spec_error(j);
    EXPECT_EQ(key, "steps");
    EXPECT_NE(msg.find("expected an integer"), std::string::npos) << msg;

    j = minimal();
    j["backbone"] = {{"hidden", {64, "wide"}}};
    EXPECT_EQ(spec_error(j).first, "backbone.hidden[1]");

    j = minimal();
    j["batch_size"] = 3.5;
    EXPECT_EQ(spec_error(j).first, "batch_size");
}

TEST(ExperimentSpec, OutOfRangeValuesAreNamed) {
    auto j = minimal();
    j["batch_size"] = -4;
    auto [key, msg] = spec_error(j);
    EXPECT_EQ(key, "batch_size");
    EXPECT_NE(msg.find("must be positive"), std::string::npos) << msg;

    j = minimal();
    j["methods"][0]["lambda"] = -1.0;
    EXPECT_EQ(spec_error(j).first, "methods[0].lambda");

    j = minimal();
    j["methods"][0]["name"] = "newton";
    EXPECT_NE(spec_error(j).second.find("is not one of"), std::string::npos);

    j = minimal();
    j["methods"] = json::array();
    EXPECT_EQ(spec_error(j).first, "methods");

    j = minimal();
    j["methods"][1] = {{"name", "cf-prox"}};  // same default label twice
    EXPECT_NE(spec_error(j).second.find("duplicate label"), std::string::npos);

    j = minimal();
    j["seeds"] = {-1};
    EXPECT_EQ(spec_error(j).first, "seeds[0]");

    j = minimal();
    j["save_state_seconds"] = -1.0;
    EXPECT_EQ(spec_error(j).first, "save_state_seconds");
    j["save_state_seconds"] = 0.0;  // a state at every log point
    EXPECT_EQ(liftlab::parse_spec(j).save_state_seconds, 0.0);
}

TEST(ExperimentSpec, OverridesFollowDottedPaths) {
    auto j = minimal();
    apply_override(j, "batch_size=8");
    apply_override(j, "task.noise=0.5");
    apply_override(j, "methods.cf-prox.lambda=10");
    apply_override(j, "methods.1.lr=0.01");
    apply_override(j, "step_order=w-first");  // not JSON: taken as a string
    auto s = parse_spec(j);
    EXPECT_EQ(s.batch_size, 8);
    EXPECT_DOUBLE_EQ(s.task.noise, 0.5);
    EXPECT_DOUBLE_EQ(s.methods[0].lambda, 10);
    EXPECT_DOUBLE_EQ(s.methods[1].lr, 0.01);
    EXPECT_EQ(s.step_order, "w-first");

    EXPECT_THROW(apply_override(j, "methods.cf-rls.lambda=1"), SpecError);
    EXPECT_THROW(apply_override(j, "no_equals_sign"), SpecError);
    apply_override(j, "batch_sise=8");  // lands, then the parser names it
    EXPECT_EQ(spec_error(j).first, "batch_sise");
}

TEST(ExperimentSpec, EveryBuiltinPresetParses) {
    ASSERT_FALSE(liftlab::builtin_presets().empty());
    for (const auto& p : liftlab::builtin_presets()) {
        EXPECT_FALSE(p.description.empty()) << p.name;
        EXPECT_NO_THROW(parse_spec(p.spec)) << p.name;
    }
    EXPECT_THROW(liftlab::load_spec_source("no-such-preset"), SpecError);
}

TEST(ExperimentSpec, SweepExpandsIntoValidSubSpecs) {
    auto j = minimal();
    j["sweep"] = {{"key", "batch_size"}, {"values", {4, 8, 32}}};
    auto s = parse_spec(j);
    auto subs = liftlab::expand_sweep(s);
    ASSERT_EQ(subs.size(), 3u);
    EXPECT_EQ(subs[1].first, "@batch_size=8");
    EXPECT_EQ(subs[1].second.batch_size, 8);
    EXPECT_TRUE(subs[1].second.sweep.key.empty());

    j["sweep"] = {{"key", "backbone.hidden"}, {"values", {{16, 16}, {64}}}};
    subs = liftlab::expand_sweep(parse_spec(j));
    EXPECT_EQ(subs[0].second.backbone.hidden, (std::vector<int>{16, 16}));
    EXPECT_EQ(subs[0].first, "@hidden=[16 16]");  // no comma: labels live in a CSV column

    j["sweep"] = {{"key", "batch_size"}, {"values", {8, -1}}};
    EXPECT_EQ(spec_error(j).first, "sweep.values");
    j["sweep"] = {{"key", "batch_size"}};
    EXPECT_EQ(spec_error(j).first, "sweep");
}

TEST(ExperimentSpec, MethodAndTaskCombinationsAreChecked) {
    auto j = minimal();
    j["methods"][1] = {{"name", "ce"}};
    EXPECT_NE(spec_error(j).second.find("classification"), std::string::npos);
    j = minimal();
    j["methods"][0] = {{"name", "cf-rls"}, {"rho", 1.5}};
    EXPECT_EQ(spec_error(j).first, "methods[0].rho");
    j = minimal();
    j["backbone"] = {{"kind", "cnn"}};
    EXPECT_EQ(spec_error(j).first, "backbone.kind");
}

TEST(ExperimentSpec, ProposalAndPublishedCpFlowKeysAreChecked) {
    const json published = json::parse(R"({"name": "t",
        "task": {"kind": "cpflow-toy", "target": "8gaussians"},
        "icnn": {"architecture": "cpflow-published", "width": 32, "layers": 20},
        "optimizer": {"lr": 0.005, "lr_step_every": 2000, "lr_step_gamma": 0.5},
        "methods": [{"name": "lifter"}, {"name": "softplus"}, {"name": "pgd"}]})");
    const auto spec = liftlab::parse_spec(published);
    EXPECT_EQ(spec.icnn.architecture, "cpflow-published");
    EXPECT_EQ(spec.optimizer.lr_step_every, 2000);
    auto j = published;
    j["methods"][0]["name"] = "lifter-nobody";
    EXPECT_EQ(spec_error(j).first, "methods[0].name");
    j = published;
    j["task"] = {{"kind", "cpflow-tabular"}};
    EXPECT_NE(spec_error(j).second.find("cpflow-toy"), std::string::npos);
    j = published;
    j["icnn"]["architecture"] = "liftlab";
    EXPECT_EQ(spec_error(j).first, "optimizer.lr_step_every");
    j = published;
    j["icnn"]["architecture"] = "cp-flow";
    EXPECT_EQ(spec_error(j).first, "icnn.architecture");
    j = published;
    j["icnn"]["readout_fanin_scale"] = true;
    EXPECT_TRUE(liftlab::parse_spec(j).icnn.readout_fanin_scale);
    EXPECT_TRUE(
        liftlab::parse_spec(liftlab::to_json(liftlab::parse_spec(j))).icnn.readout_fanin_scale);
    j["icnn"]["architecture"] = "liftlab";
    j["optimizer"].erase("lr_step_every");
    EXPECT_EQ(spec_error(j).first, "icnn.readout_fanin_scale");
    // Recipe B's convex blocks: round-trip, at least one, and only for cpflow-published.
    j = published;
    j["icnn"]["blocks"] = 5;
    EXPECT_EQ(liftlab::parse_spec(liftlab::to_json(liftlab::parse_spec(j))).icnn.blocks, 5);
    j["icnn"]["blocks"] = 0;
    EXPECT_EQ(spec_error(j).first, "icnn.blocks");
    j["icnn"]["blocks"] = 2;
    j["icnn"]["architecture"] = "liftlab";
    j["optimizer"].erase("lr_step_every");
    EXPECT_EQ(spec_error(j).first, "icnn.blocks");

    j = json::parse(R"({"name": "t", "task": {"kind": "icnn-ebm-nd", "target": "gaussian"},
        "icnn": {"proposal": "flow", "flow_layers": 4, "flow_refine_steps": 1},
        "methods": [{"name": "lifter"}]})");
    EXPECT_EQ(liftlab::parse_spec(j).icnn.flow_layers, 4);
    j["icnn"]["proposal"] = "maf";
    EXPECT_NE(spec_error(j).second.find("flow, gaussian, student-t"), std::string::npos);
    j["icnn"]["proposal"] = "flow";
    j["icnn"]["flow_hidden"] = 0;
    EXPECT_EQ(spec_error(j).first, "icnn.flow_hidden");

    // The proposal adapted to the EBM: off by default, needs the flow proposal.
    j = json::parse(R"({"name": "t", "task": {"kind": "icnn-ebm-nd", "target": "gaussian"},
        "icnn": {"proposal": "flow", "proposal_adapt_steps": 500, "proposal_adapt_train": true},
        "methods": [{"name": "lifter"}]})");
    EXPECT_EQ(liftlab::parse_spec(j).icnn.proposal_adapt_steps, 500);
    EXPECT_TRUE(liftlab::parse_spec(j).icnn.proposal_adapt_train);
    EXPECT_EQ(liftlab::IcnnSpec{}.proposal_adapt_steps, 0);
    EXPECT_FALSE(liftlab::IcnnSpec{}.proposal_adapt_train);
    j["icnn"]["proposal_defensive_weight"] = 1.0;
    EXPECT_EQ(spec_error(j).first, "icnn.proposal_defensive_weight");
    j["icnn"].erase("proposal_defensive_weight");
    j["icnn"]["proposal"] = "student-t";
    EXPECT_EQ(spec_error(j).first, "icnn.proposal_adapt_steps");
    j["icnn"]["proposal"] = "flow";
    j["icnn"]["proposal_adapt_steps"] = 0;
    EXPECT_EQ(spec_error(j).first, "icnn.proposal_adapt_train");
}

TEST(ExperimentSpec, RecordedVersionsAndDataSizesDoNotStopARerun) {
    auto j = liftlab::to_json(parse_spec(minimal()));
    j["versions"] = {{"libtorch", "1.13.1"}};
    j["data"] = {{"n_train", 4096}};
    EXPECT_EQ(liftlab::to_json(parse_spec(j)), liftlab::to_json(parse_spec(minimal())));
}

TEST(ExperimentSpec, TorchScriptModelKeysAreCheckedAndRoundTrip) {
    auto with = [](const char* patch) {
        json j = minimal();
        j.merge_patch(json::parse(patch));
        return j;
    };
    EXPECT_EQ(spec_error(with(R"({"backbone": {"kind": "torchscript"}})")).first,
              "backbone.script");
    EXPECT_EQ(spec_error(with(R"({"backbone": {"script": "m.pt"}})")).first, "backbone.script");
    EXPECT_EQ(spec_error(with(R"({"backbone": {"kind": "torchscript", "script": "m.pt",
                                               "init": "zeros"}})"))
                  .first,
              "backbone.init");
    EXPECT_EQ(spec_error(with(R"({"backbone": {"kind": "torchscript", "script": "m.pt",
                                               "script_sha256": "ABC"}})"))
                  .first,
              "backbone.script_sha256");
    const json ebm = json::parse(R"({"name": "e", "task": {"kind": "icnn-ebm-1d"},
                                     "methods": [{"name": "lifter"}]})");
    auto icnn = [&](const char* patch) {
        json j = ebm;
        j.merge_patch(json::parse(patch));
        return j;
    };
    const auto none = spec_error(icnn(R"({"icnn": {"script": "e.pt"}})"));
    EXPECT_EQ(none.first, "icnn.constrained");
    EXPECT_NE(none.second.find("icnn.constrained_regex"), std::string::npos) << none.second;
    EXPECT_EQ(spec_error(icnn(R"({"icnn": {"script": "e.pt", "constrained": ["a"],
                                           "constrained_regex": "b"}})"))
                  .first,
              "icnn.constrained");
    EXPECT_EQ(spec_error(icnn(R"({"icnn": {"constrained": ["a"]}})")).first, "icnn.constrained");
    const auto regex =
        spec_error(icnn(R"({"icnn": {"script": "e.pt", "constrained_regex": "(w"}})"));
    EXPECT_EQ(regex.first, "icnn.constrained_regex");
    EXPECT_EQ(spec_error(icnn(R"({"icnn": {"script": "e.pt", "constrained": ["w"]},
                                  "methods": [{"name": "softplus-wide"}]})"))
                  .first,
              "methods[0].name");
    EXPECT_EQ(spec_error(icnn(R"({"icnn": {"script": "e.pt", "constrained": ["w"]},
                                  "task": {"kind": "cpflow-toy", "target": "8gaussians"}})"))
                  .first,
              "icnn.script");
    // A torchscript backbone on a task without a backbone + last layer.
    EXPECT_EQ(spec_error(icnn(R"({"backbone": {"kind": "torchscript", "script": "m.pt"}})")).first,
              "backbone.kind");
    // Every key survives the resolved spec.
    const auto s = parse_spec(icnn(R"({"icnn": {"script": "e.pt", "constrained": ["w", "v"],
                                                "init": "reset"}})"));
    const auto back = parse_spec(liftlab::to_json(s));
    EXPECT_EQ(back.icnn.script, "e.pt");
    EXPECT_EQ(back.icnn.constrained, (std::vector<std::string>{"w", "v"}));
    EXPECT_EQ(back.icnn.init, "reset");
    const auto b = parse_spec(with(R"({"backbone": {"kind": "torchscript", "script": "m.pt"}})"));
    EXPECT_EQ(parse_spec(liftlab::to_json(b)).backbone.script, "m.pt");
    EXPECT_TRUE(b.export_models);
}

// A method named without its settings takes the registry's defaults (issue 36): adam and sgd
// their step sizes, which they need (each brings its own optimizer).
TEST(ExperimentSpec, MethodsNamedAloneTakeTheRegistrysDefaults) {
    const auto s = parse_spec(json::parse(
        R"({"name": "t", "methods": [{"name": "adam"}, {"name": "sgd"}, {"name": "cf-prox"}]})"));
    EXPECT_DOUBLE_EQ(s.methods[0].lr, 1e-3);
    EXPECT_DOUBLE_EQ(s.methods[1].lr, 0.05);
    EXPECT_DOUBLE_EQ(s.methods[2].lambda, liftlab::MethodSpec{}.lambda);
    // What the spec says wins, and a non-positive step size is still refused.
    EXPECT_DOUBLE_EQ(
        parse_spec(json::parse(R"({"methods": [{"name": "adam", "lr": 0.02}]})")).methods[0].lr,
        0.02);
    EXPECT_EQ(spec_error(json::parse(R"({"methods": [{"name": "adam", "lr": 0}]})")).first,
              "methods[0].lr");
}

// --methods: the preset's own methods keep their settings, others come with their defaults, in
// the order asked; an unknown or repeated name is refused with the valid ones.
TEST(ExperimentSpec, SelectMethodsPicksFromThePresetOrTheRegistry) {
    auto j = liftlab::load_spec_source("cf-regression");
    liftlab::select_methods(j, "cf-rls, cf-prox");
    const auto s = parse_spec(j);
    ASSERT_EQ(s.methods.size(), 2u);
    EXPECT_EQ(s.methods[0].name, "cf-rls");
    EXPECT_DOUBLE_EQ(s.methods[0].rho, liftlab::MethodSpec{}.rho);
    EXPECT_EQ(s.methods[1].name, "cf-prox");
    EXPECT_DOUBLE_EQ(s.methods[1].lambda, 100.0);  // the preset's, not the default 1
    auto error = [](const std::string& names) {
        auto spec = liftlab::load_spec_source("cf-regression");
        try {
            liftlab::select_methods(spec, names);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    const std::string unknown = error("adam,lifter2");
    EXPECT_NE(unknown.find("--methods: 'lifter2' is neither a method of cf-regression"),
              std::string::npos)
        << unknown;
    // The valid ones: the preset's, then the registry's methods for this task (no ce: it needs a
    // classification task; no lifter: an ICNN's).
    EXPECT_NE(unknown.find("(valid: adam, sgd, cf-ridge, cf-prox, cf-full, cf-rls)"),
              std::string::npos)
        << unknown;
    EXPECT_NE(error("adam,adam").find("names 'adam' twice"), std::string::npos);
    EXPECT_NE(error(" , ").find("needs at least one method"), std::string::npos);
    // A label picks that method alone, a name every method of that name without a label.
    json two = json::parse(R"({"name": "t", "methods": [{"name": "cf-prox", "label": "p1"},
        {"name": "cf-prox", "label": "p2", "lambda": 5}, {"name": "adam"}]})");
    liftlab::select_methods(two, "p2");
    ASSERT_EQ(two["methods"].size(), 1u);
    EXPECT_EQ(two["methods"][0]["lambda"], 5);
}
