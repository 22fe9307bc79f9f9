// 32-D latents of Fashion-MNIST for the n-D log-concave EBM task (docs/methods.md §8.7).
//
// An MLP autoencoder, encoder 784 → 256 (ReLU) → latent_dim (linear), decoder latent_dim → 256
// (ReLU) → 784 (sigmoid), is trained on the flattened training images (pixels in [0, 1]) with the
// mean squared error and Adam. Weights start as U(±1/√fan_in) (LibTorch's Linear default) drawn
// from a generator seeded by `seed`, and minibatches are drawn without replacement from seeded
// permutations, so the result is a function of the options (bit-identical for a fixed LibTorch
// thread count). The encoded train and test latents are then standardised with the train mean and
// population standard deviation of each coordinate.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>

namespace liftlab {

struct LatentOptions {
    std::string data_dir = "/usr/share/datasets/fashion-mnist";
    int latent_dim = 32;
    int steps = 2000;  // Adam steps
    int batch = 128;   // minibatch size (capped at the number of training images)
    double lr = 1e-3;
    int64_t n_train = 0;  // first n training images; 0: all 60000
    int64_t n_test = 0;   // first n test images; 0: all 10000
    uint64_t seed = 0;
    // Cache folder; empty: $XDG_CACHE_HOME/liftlab, else ~/.cache/liftlab.
    std::string cache_dir;
    bool use_cache = true;  // false: neither read nor write the cache
};

struct Latents {
    // n_train × latent_dim and n_test × latent_dim, float32, standardised with train statistics
    // (every train column has mean 0 and population sd 1; a constant column is only centred).
    torch::Tensor train, test;
    // Mean per-pixel squared error of the trained autoencoder on the test images.
    double reconstruction_mse = 0.0;
};

// Trains the autoencoder and returns the latents, or loads them from the cache. `progress`
// receives the completed fraction of training (about 100 calls); returning false throws
// DataCancelled (engine/data/dataset.h) and caches nothing. A cache hit does not load the images
// and reports progress(1.0) once. Throws std::invalid_argument naming a bad option and DataError
// (from load_fashion_mnist) when the data files are missing or bad.
Latents fashion_mnist_latents(const LatentOptions& options,
                              const std::function<bool(double)>& progress = {});

// The cache folder options.cache_dir resolves to ("" when no folder can be determined).
std::string fashion_mnist_latents_cache_dir(const LatentOptions& options);

// The cache file for these options: <cache dir>/fmnist-latents-<64-bit hash of every option that
// changes the result>.pt (cache_dir and use_cache themselves are not part of the key). The file
// also stores the full key, which is compared on load. Written atomically (temp file + rename).
std::string fashion_mnist_latents_cache_file(const LatentOptions& options);

}  // namespace liftlab
