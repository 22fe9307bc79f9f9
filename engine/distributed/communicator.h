// The collectives data-parallel training needs (DESIGN.md "Scale"): an in-place sum over ranks,
// a broadcast from one rank, a barrier. Implemented on LibTorch's c10d process group with the Gloo
// backend (gloo_communicator.cpp, joined with launch_config.h's join_process_group); one process
// runs without a communicator at all.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>

#include "distributed/communication_error.h"

namespace liftlab {

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int world_size() const = 0;
    // Every collective blocks until all ranks took part; throws CommunicationError otherwise.
    // `what` names the payload in error messages ("gradients", "closed-form statistics").
    virtual void all_reduce_sum(torch::Tensor& t, const char* what) = 0;  // in place, contiguous
    virtual void broadcast(torch::Tensor& t, int root, const char* what) = 0;
    virtual void barrier() = 0;

    // Payload bytes this rank contributed to collectives so far (not protocol overhead), for
    // measuring communication volume.
    std::int64_t payload_bytes() const { return payload_bytes_; }

protected:
    void count_bytes(const torch::Tensor& t) { payload_bytes_ += t.numel() * t.element_size(); }

private:
    std::int64_t payload_bytes_ = 0;
};

}  // namespace liftlab
