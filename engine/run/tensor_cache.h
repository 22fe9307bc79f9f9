// A small on-disk cache of generated tensors (Burgers data, Fashion-MNIST latents, fitted flow
// proposals): one file per parameter set, named by a stable hash of a canonical key text, in the
// engine's own bounded state format (run/state_archive.h; no LibTorch deserialiser reads it),
// holding the key itself so a hash collision or a stale format is a miss, never wrong data.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace liftlab {

// FNV-1a, 64 bit: stable across builds and runs (std::hash is not).
std::uint64_t fnv1a64(const std::string& text);

// The tensors stored at `path`, when the file exists, is a readable state archive holding exactly
// `key` and `count` tensors; std::nullopt otherwise — a damaged, truncated or foreign file too
// (the caller regenerates and overwrites it).
std::optional<std::vector<torch::Tensor>> load_keyed_tensors(const std::string& path,
                                                             const std::string& key, size_t count);

// Writes the key and the tensors (float32, float64, int64 or uint8) through a temporary file and a
// rename; creates the folder. Best effort: a failure leaves no partial file and is not an error
// (the caller has the data already).
void store_keyed_tensors(const std::string& path, const std::string& key,
                         const std::vector<torch::Tensor>& tensors);

}  // namespace liftlab
