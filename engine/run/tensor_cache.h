// A small on-disk cache of generated tensors (Burgers data, Fashion-MNIST latents): one
// torch::save archive per parameter set, named by a stable hash of a canonical key text, holding
// the key itself first so a hash collision or a stale format is a miss, never wrong data.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace liftlab {

// FNV-1a, 64 bit: stable across builds and runs (std::hash is not).
std::uint64_t fnv1a64(const std::string& text);

// The tensors stored after the key at `path`, when the file exists, is a readable archive of
// 1 + `count` tensors and holds exactly `key`; std::nullopt otherwise (the caller regenerates).
std::optional<std::vector<torch::Tensor>> load_keyed_tensors(const std::string& path,
                                                             const std::string& key, size_t count);

// Writes {key, tensors…} through a temporary file and a rename; creates the folder. Best effort:
// a failure leaves no partial file and is not an error (the caller has the data already).
void store_keyed_tensors(const std::string& path, const std::string& key,
                         const std::vector<torch::Tensor>& tensors);

}  // namespace liftlab
