// The device path (spec key `device`, core/device.h), exercised on the CPU: Debian's LibTorch has
// no CUDA, so these check the resolution rules, the refusals, and that data and models are moved
// to the device the run names and train there exactly as before.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "core/errors.h"
#include "data/dataset.h"
#include "spec/experiment_spec.h"
#include "training/method_trainer.h"

namespace {

using json = nlohmann::json;

json regression_spec() {
    return json::parse(R"({
        "name": "device",
        "task": {"input_dim": 4, "output_dim": 2, "teacher_hidden": [16], "n_train": 128,
                 "n_test": 64, "noise": 0.05},
        "backbone": {"hidden": [16], "feature_dim": 8},
        "methods": [{"name": "cf-prox", "lambda": 1.0}, {"name": "adam", "lr": 0.003}],
        "batch_size": 16, "steps": 10, "log_every": 5, "threads": 1})");
}

std::string spec_error_key(const json& j) {
    try {
        liftlab::parse_spec(j);
    } catch (const liftlab::SpecError& e) {
        return e.key();
    }
    return "";
}

}  // namespace

TEST(Device, ResolvesCpuAutoAndCuda) {
    EXPECT_TRUE(liftlab::resolve_device("cpu").is_cpu());
    EXPECT_EQ(liftlab::resolve_device("auto").is_cuda(), liftlab::cuda_available());
    if (liftlab::cuda_available()) {
        EXPECT_TRUE(liftlab::resolve_device("cuda").is_cuda());
    } else {
        try {
            liftlab::resolve_device("cuda");
            ADD_FAILURE() << "cuda resolved on a machine without CUDA";
        } catch (const liftlab::SpecError& e) {
            EXPECT_EQ(e.key(), "device");
            EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(liftlab::device_label(torch::Device(torch::kCPU)), "cpu");
}

TEST(Device, SpecKeyIsCheckedAndRoundTrips) {
    auto j = regression_spec();
    EXPECT_EQ(liftlab::parse_spec(j).device, "cpu");  // the default
    j["device"] = "gpu";
    EXPECT_EQ(spec_error_key(j), "device");
    j["device"] = "auto";
    const auto spec = liftlab::parse_spec(j);
    EXPECT_EQ(spec.device, "auto");
    EXPECT_EQ(liftlab::parse_spec(liftlab::to_json(spec)).device, "auto");
    // The ICNN family runs on the CPU only: an explicit cuda is refused, auto is allowed.
    json icnn = {{"name", "i"},
                 {"task", {{"kind", "icnn-ebm-1d"}}},
                 {"methods", json::array({{{"name", "pgd"}}})},
                 {"device", "cuda"}};
    EXPECT_EQ(spec_error_key(icnn), "device");
    icnn["device"] = "auto";
    EXPECT_EQ(liftlab::parse_spec(icnn).device, "auto");
}

TEST(Device, DatasetMovesEveryTensorAndKeepsItsValues) {
    const auto spec = liftlab::parse_spec(regression_spec());
    const auto data = liftlab::make_dataset(spec.task);
    const torch::Device cpu(torch::kCPU);
    const auto moved = liftlab::to_device(data, cpu);
    for (const auto* t : {&moved.x_train, &moved.y_train, &moved.x_test, &moved.y_test})
        EXPECT_EQ(t->device(), cpu);
    EXPECT_TRUE(torch::equal(moved.x_train, data.x_train));
    EXPECT_TRUE(torch::equal(moved.y_test, data.y_test));
    EXPECT_FALSE(moved.labels_train.defined());  // undefined tensors stay undefined
}

// A trainer lives on its data's device: backbone, head and optimizer state, and it trains there
// bit for bit as on the data it was given before the move.
TEST(Device, TrainerFollowsItsDataAndTrainsIdentically) {
    const auto spec = liftlab::parse_spec(regression_spec());
    const auto data = liftlab::make_dataset(spec.task);
    const auto moved = liftlab::to_device(data, torch::Device(torch::kCPU));
    for (const auto& method : spec.methods) {
        liftlab::MethodTrainer a(spec, method, data, /*seed=*/3);
        liftlab::MethodTrainer b(spec, method, moved, /*seed=*/3);
        for (const auto& p : b.backbone().parameters())
            EXPECT_EQ(p.device(), moved.x_train.device());
        EXPECT_EQ(b.last_layer().device(), moved.x_train.device());
        for (int t = 0; t < 5; ++t) EXPECT_EQ(a.step(), b.step()) << method.name << " step " << t;
        EXPECT_TRUE(torch::equal(a.last_layer(), b.last_layer())) << method.name;
    }
}
