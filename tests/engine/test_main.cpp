// Every engine test is deterministic: a fixed global seed and a fixed thread count.
#include <gtest/gtest.h>
#include <torch/torch.h>

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    torch::manual_seed(/*seed=*/20261201);
    torch::set_num_threads(1);
    return RUN_ALL_TESTS();
}
