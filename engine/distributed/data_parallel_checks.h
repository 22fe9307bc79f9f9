// Checks every rank makes before data-parallel training, so that a mistake fails on all ranks
// with one message instead of desynchronising the collectives.
#pragma once
#include "distributed/communicator.h"
#include "spec/experiment_spec.h"

namespace liftlab {

// Throws std::invalid_argument when a (swept) batch size is below the world size, or when any
// rank was given a different spec than rank 0 (a collective: every rank must call it).
void check_data_parallel_spec(const ExperimentSpec& spec, Communicator& comm);

}  // namespace liftlab
