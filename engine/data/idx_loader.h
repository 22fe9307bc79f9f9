// IDX files (the MNIST / Fashion-MNIST format), gzipped or plain, and the Fashion-MNIST data set
// (docs/methods.md §8.5).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace liftlab {

// Where Debian's dataset-fashion-mnist package installs the four *-ubyte.gz files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Reads one unsigned-byte IDX file: big-endian magic 0x000008NN (NN = number of dimensions, 1–4;
// 0x00000801 for labels, 0x00000803 for n × rows × cols images), then NN big-endian uint32 sizes,
// then the bytes. gzip-compressed and plain files are both accepted (zlib reads either).
// Returns a uint8 tensor of the stored shape. Throws DataError naming the file when it is missing,
// has a bad magic number, holds fewer bytes than its header promises (truncated), holds bytes
// after them, or is a corrupt gzip stream.
torch::Tensor read_idx(const std::string& path);

struct FashionMnist {
    // images: n × 1 × 28 × 28 float32 in [0, 1] (byte / 255); labels: n int64 in 0..9.
    torch::Tensor images_train, labels_train;
    torch::Tensor images_test, labels_test;
    static constexpr int64_t num_classes = 10;
};

// Loads train-{images-idx3,labels-idx1}-ubyte.gz and t10k-… from `dir` (a file without the .gz
// suffix is used when the .gz one is absent). max_train / max_test keep the first samples of each
// split (negative: all), and only those are decompressed. Throws DataError naming the file when a
// file is missing (with the Debian package that provides it), has a bad magic number or the wrong
// kind (images vs labels), is truncated, when images and labels disagree on the sample count, or
// when a label is outside 0..9 (`line` is then the 1-based sample number).
FashionMnist load_fashion_mnist(const std::string& dir = kFashionMnistDir, int64_t max_train = -1,
                                int64_t max_test = -1);

}  // namespace liftlab
