// Mini-batches without replacement: a fresh seeded permutation every epoch, the incomplete last
// batch dropped. Two samplers with the same seed yield the same batches, which is what makes the
// methods of one run comparable.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <random>
#include <string>

namespace liftlab {

class StateArchive;

class BatchSampler {
public:
    BatchSampler(int64_t n, int64_t batch_size, std::uint64_t seed);
    // Indices of the next batch (int64 tensor of size batch_size).
    torch::Tensor next();
    // Position, permutation and engine (run --resume): the batches after load_state are those
    // the saved sampler would have drawn.
    void save_state(StateArchive& a, const std::string& prefix) const;
    void load_state(const StateArchive& a, const std::string& prefix);

private:
    void reshuffle();
    int64_t n_, batch_size_, cursor_;
    std::mt19937_64 rng_;
    std::vector<int64_t> order_;
};

}  // namespace liftlab
