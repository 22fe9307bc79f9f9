// Every engine test is deterministic: a fixed global seed and a fixed thread count.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "nn/model_probe.h"

int main(int argc, char** argv) {
    // Runs that check a user's TorchScript file start this program again as the check's child.
    if (const auto code = liftlab::run_model_probe_if_asked(argc, argv)) return *code;
    ::testing::InitGoogleTest(&argc, argv);
    torch::manual_seed(/*seed=*/20261201);
    torch::set_num_threads(1);
    return RUN_ALL_TESTS();
}
