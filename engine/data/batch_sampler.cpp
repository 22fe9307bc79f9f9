#include "data/batch_sampler.h"

#include "core/errors.h"
#include "run/state_archive.h"

#include <algorithm>
#include <cstring>
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

void BatchSampler::save_state(StateArchive& a, const std::string& prefix) const {
    a.put_int(prefix + "cursor", cursor_);
    a.put_rng(prefix + "rng", rng_);
    a.put(prefix + "order", torch::from_blob(const_cast<int64_t*>(order_.data()),
                                             {static_cast<int64_t>(order_.size())}, torch::kLong));
}

void BatchSampler::load_state(const StateArchive& a, const std::string& prefix) {
    const auto order = a.tensor(prefix + "order");
    const int64_t cursor = a.integer(prefix + "cursor");
    if (order.scalar_type() != torch::kLong || order.dim() != 1 || order.size(0) != n_ ||
        cursor < 0 || cursor > n_ ||
        (order.numel() > 0 &&
         (order.min().item<int64_t>() < 0 || order.max().item<int64_t>() >= n_)))
        throw DataError("state", 0,
                        "sampler '" + prefix + "' does not fit " + std::to_string(n_) + " samples");
    a.rng(prefix + "rng", rng_);
    std::memcpy(order_.data(), order.data_ptr<int64_t>(), sizeof(int64_t) * order_.size());
    cursor_ = cursor;
}

}  // namespace liftlab
