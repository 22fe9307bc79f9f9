// The CIFAR-10 / CIFAR-100 binary format, so users can bring those data sets
// (docs/methods.md §8.5). Each record is [label byte(s)][3072 image bytes],
// the image channel-major: 1024 red bytes (32 rows of 32), then 1024 green, then 1024 blue.
// CIFAR-10 records carry 1 label byte; CIFAR-100 records carry 2 (coarse, then fine).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace liftlab {

struct CifarData {
    torch::Tensor images;  // n × 3 × 32 × 32 float32 in [0, 1] (byte / 255)
    torch::Tensor labels;  // n int64
    // 10 (CIFAR-10), 20 (CIFAR-100 coarse, label_index 0) or 100 (CIFAR-100 fine, label_index 1),
    // raised to max label + 1 when a file holds larger labels.
    int64_t num_classes = 0;
};

// Reads and concatenates the records of `files` in order. label_bytes is 1 or 2; label_index
// (0 ≤ label_index < label_bytes) picks which label byte becomes the label. Throws
// std::invalid_argument for bad arguments, and DataError naming the file when it is missing or
// empty, or when its size is not a multiple of the record size: then `line` is the 1-based number
// of the truncated record.
CifarData read_cifar_binary(const std::vector<std::string>& files, int label_bytes,
                            int label_index);

}  // namespace liftlab
