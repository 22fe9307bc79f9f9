// The exact distributed closed form (docs/methods.md §1.7): ΦᵀΦ, ΦᵀY and n are sums over
// samples, so summing each rank's statistics over ranks gives the statistics of the union batch,
// and the solve that follows is the one-process solve. One float64 all-reduce of
// (d+1)² + (d+1)k + 1 numbers per step, independent of the batch size.
#pragma once
#include "distributed/communicator.h"
#include "lastlayer/proximal_solve.h"

namespace liftlab {

// Replaces each rank's `stats` by the sum over ranks (packed into one buffer, one collective).
// Every rank must hold statistics of the same shapes.
void all_reduce_statistics(GramStatistics& stats, Communicator& comm);

// The bytes one rank sends per closed-form step: statistics vs gathering features and targets of
// `rows` samples instead (d features plus the bias column, k outputs), float64 both.
std::int64_t statistics_payload_bytes(std::int64_t d, std::int64_t k);
std::int64_t feature_gather_payload_bytes(std::int64_t rows, std::int64_t d, std::int64_t k);

}  // namespace liftlab
