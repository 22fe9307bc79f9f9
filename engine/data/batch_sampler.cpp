#include "data/batch_sampler.h"

#include <algorithm>
#include <numeric>

namespace liftlab {

BatchSampler::BatchSampler(int64_t n, int64_t batch_size, std::uint64_t seed)
    : n_(n), batch_size_(std::min(batch_size, n)), cursor_(n), rng_(seed), order_(n) {
    std::iota(order_.begin(), order_.end(), 0);
}

void BatchSampler::reshuffle() {
    // Fisher–Yates with our own engine: std::shuffle's use of the engine is implementation-defined.
    for (int64_t i = n_ - 1; i > 0; --i) {
        const int64_t j = static_cast<int64_t>(rng_() % static_cast<std::uint64_t>(i + 1));
        std::swap(order_[i], order_[j]);
    }
    cursor_ = 0;
}

torch::Tensor BatchSampler::next() {
    if (cursor_ + batch_size_ > n_) reshuffle();
    auto idx = torch::from_blob(order_.data() + cursor_, {batch_size_}, torch::kLong).clone();
    cursor_ += batch_size_;
    return idx;
}

}  // namespace liftlab
