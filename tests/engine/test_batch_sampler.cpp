#include <gtest/gtest.h>

#include <set>

#include "data/batch_sampler.h"

TEST(BatchSampler, EpochVisitsEverySampleOnceAndIsReproducible) {
    liftlab::BatchSampler a(/*n=*/20, /*batch_size=*/5, /*seed=*/3);
    liftlab::BatchSampler b(20, 5, 3);
    std::set<int64_t> seen;
    for (int i = 0; i < 4; ++i) {
        auto ia = a.next(), ib = b.next();
        EXPECT_TRUE(torch::equal(ia, ib));
        for (int64_t j = 0; j < ia.numel(); ++j) seen.insert(ia[j].item<int64_t>());
    }
    EXPECT_EQ(seen.size(), 20u);
    liftlab::BatchSampler c(20, 5, 4);
    EXPECT_FALSE(torch::equal(liftlab::BatchSampler(20, 5, 3).next(), c.next()));
}
