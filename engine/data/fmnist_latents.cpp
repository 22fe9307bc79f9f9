#include "data/fmnist_latents.h"

#include "core/c_numbers.h"
#include "run/tensor_cache.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "data/dataset.h"
#include "data/idx_loader.h"

namespace liftlab {
namespace {

namespace fs = std::filesystem;

// Bumped whenever the model, training or standardisation changes results, so old cache files
// stop matching.
constexpr const char* kLatentsCacheVersion = "fmnist-latents-v1";
constexpr int64_t kPixels = 28 * 28;
constexpr int64_t kHidden = 256;
// Rows encoded at once after training (bounds the working set for 60000 images).
constexpr int64_t kEncodeChunk = 4096;
// About this many progress calls per training run.
constexpr int kProgressCalls = 100;

void require_latents(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("fashion_mnist_latents: " + what);
}

void validate_latents(const LatentOptions& o) {
    require_latents(o.latent_dim >= 1,
                    "latent_dim (" + std::to_string(o.latent_dim) + ") must be >= 1");
    require_latents(o.steps >= 0, "steps (" + std::to_string(o.steps) + ") must be >= 0");
    require_latents(o.batch >= 1, "batch (" + std::to_string(o.batch) + ") must be >= 1");
    require_latents(std::isfinite(o.lr) && o.lr > 0, "lr must be positive and finite");
    require_latents(o.n_train >= 0,
                    "n_train (" + std::to_string(o.n_train) + ") must be >= 0 (0: all)");
    require_latents(o.n_test >= 0,
                    "n_test (" + std::to_string(o.n_test) + ") must be >= 0 (0: all)");
}

std::string canonical_dir(const std::string& dir) {
    std::error_code ec;
    const auto p = fs::weakly_canonical(fs::absolute(dir, ec), ec);
    return ec ? dir : p.string();
}

// Every option that changes the result, in a canonical text form.
std::string latents_cache_key(const LatentOptions& o) {
    std::ostringstream s;
    s << kLatentsCacheVersion << " dir=" << canonical_dir(o.data_dir) << " latent=" << o.latent_dim
      << " steps=" << o.steps << " batch=" << o.batch << " lr=" << c_general(o.lr, 17)
      << " n_train=" << o.n_train << " n_test=" << o.n_test << " seed=" << o.seed;
    return s.str();
}

// `max_rows` is the n_train / n_test option: 0 (all) or an upper bound (the file may hold fewer).
bool valid_latents(const torch::Tensor& t, int64_t max_rows, int64_t cols) {
    return t.scalar_type() == torch::kFloat32 && t.dim() == 2 && t.size(1) == cols &&
           t.size(0) >= 1 && (max_rows == 0 || t.size(0) <= max_rows) &&
           torch::isfinite(t).all().item<bool>();
}

std::optional<Latents> load_cached_latents(const std::string& path, const LatentOptions& o) {
    const auto t = load_keyed_tensors(path, latents_cache_key(o), 3);
    if (!t) return std::nullopt;
    if (!valid_latents((*t)[0], o.n_train, o.latent_dim) ||
        !valid_latents((*t)[1], o.n_test, o.latent_dim) || (*t)[2].numel() != 1)
        return std::nullopt;
    Latents out{(*t)[0].contiguous(), (*t)[1].contiguous(), (*t)[2].item<double>()};
    if (!std::isfinite(out.reconstruction_mse)) return std::nullopt;
    return out;
}

void store_cached_latents(const std::string& path, const LatentOptions& o, const Latents& l) {
    store_keyed_tensors(path, latents_cache_key(o),
                        {l.train, l.test, torch::tensor(l.reconstruction_mse, torch::kFloat64)});
}

// The autoencoder's parameters as plain tensors: W is out × in, as in torch::nn::Linear.
struct Autoencoder {
    std::vector<torch::Tensor> w, b;  // layers: enc1, enc2, dec1, dec2

    Autoencoder(int64_t latent, at::Generator& gen) {
        const int64_t sizes[5] = {kPixels, kHidden, latent, kHidden, kPixels};
        for (int i = 0; i < 4; ++i) {
            const double bound = 1.0 / std::sqrt(static_cast<double>(sizes[i]));
            auto uniform = [&](at::IntArrayRef shape) {
                return ((torch::rand(shape, gen, torch::kFloat32) * 2.0 - 1.0) * bound)
                    .set_requires_grad(true);
            };
            w.push_back(uniform({sizes[i + 1], sizes[i]}));
            b.push_back(uniform({sizes[i + 1]}));
        }
    }
    std::vector<torch::Tensor> parameters() const {
        std::vector<torch::Tensor> p;
        for (size_t i = 0; i < w.size(); ++i) p.insert(p.end(), {w[i], b[i]});
        return p;
    }
    torch::Tensor encode(const torch::Tensor& x) const {
        return torch::linear(torch::relu(torch::linear(x, w[0], b[0])), w[1], b[1]);
    }
    torch::Tensor decode(const torch::Tensor& z) const {
        return torch::sigmoid(torch::linear(torch::relu(torch::linear(z, w[2], b[2])), w[3], b[3]));
    }
};

// Encodes in chunks (no autograd); also accumulates the summed squared reconstruction error.
torch::Tensor encode_all(const Autoencoder& ae, const torch::Tensor& x, double* squared_error) {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> parts;
    double se = 0.0;
    for (int64_t s = 0; s < x.size(0); s += kEncodeChunk) {
        const auto xb = x.slice(0, s, std::min(s + kEncodeChunk, x.size(0)));
        auto z = ae.encode(xb);
        if (squared_error) se += (ae.decode(z) - xb).pow(2).sum(torch::kFloat64).item<double>();
        parts.push_back(z);
    }
    if (squared_error) *squared_error = se;
    return torch::cat(parts, 0);
}

Latents train_and_encode(const LatentOptions& o, const std::function<bool(double)>& progress) {
    const FashionMnist data = load_fashion_mnist(o.data_dir, o.n_train > 0 ? o.n_train : -1,
                                                 o.n_test > 0 ? o.n_test : -1);
    const auto x_train = data.images_train.reshape({-1, kPixels}).to(torch::kFloat32).contiguous();
    const auto x_test = data.images_test.reshape({-1, kPixels}).to(torch::kFloat32).contiguous();
    const int64_t n = x_train.size(0);
    require_latents(n >= 2,
                    "needs at least 2 training images to standardise, got " + std::to_string(n));
    require_latents(x_test.size(0) >= 1, "needs at least 1 test image");

    auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
    Autoencoder ae(o.latent_dim, gen);
    torch::optim::Adam adam(ae.parameters(), torch::optim::AdamOptions(o.lr));
    const int64_t batch = std::min<int64_t>(o.batch, n);
    const int report_every = std::max(1, o.steps / kProgressCalls);
    torch::Tensor perm;
    int64_t pos = n;  // forces a fresh permutation at the first step
    for (int step = 0; step < o.steps; ++step) {
        if (pos + batch > n) {
            perm = torch::randperm(n, gen, torch::kInt64);
            pos = 0;
        }
        const auto xb = x_train.index_select(0, perm.slice(0, pos, pos + batch));
        pos += batch;
        adam.zero_grad();
        const auto loss = torch::mse_loss(ae.decode(ae.encode(xb)), xb);
        loss.backward();
        adam.step();
        if (progress && ((step + 1) % report_every == 0 || step + 1 == o.steps) &&
            !progress(static_cast<double>(step + 1) / o.steps))
            throw DataCancelled();
    }

    const auto z_train = encode_all(ae, x_train, nullptr).to(torch::kFloat64);
    double test_se = 0.0;
    const auto z_test = encode_all(ae, x_test, &test_se).to(torch::kFloat64);
    const auto mu = z_train.mean(0);
    auto sd = z_train.std(0, /*unbiased=*/false);
    sd = torch::where(sd > 0, sd, torch::ones_like(sd));
    Latents out;
    out.train = ((z_train - mu) / sd).to(torch::kFloat32).contiguous();
    out.test = ((z_test - mu) / sd).to(torch::kFloat32).contiguous();
    out.reconstruction_mse = test_se / static_cast<double>(x_test.numel());
    return out;
}

}  // namespace

std::string fashion_mnist_latents_cache_dir(const LatentOptions& options) {
    if (!options.cache_dir.empty()) return options.cache_dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::string(xdg) + "/liftlab";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.cache/liftlab";
    return "";
}

std::string fashion_mnist_latents_cache_file(const LatentOptions& options) {
    const std::string dir = fashion_mnist_latents_cache_dir(options);
    if (dir.empty()) return "";
    std::ostringstream name;
    name << "fmnist-latents-" << std::hex << std::setw(16) << std::setfill('0')
         << fnv1a64(latents_cache_key(options)) << ".pt";
    return (fs::path(dir) / name.str()).string();
}

Latents fashion_mnist_latents(const LatentOptions& options,
                              const std::function<bool(double)>& progress) {
    validate_latents(options);
    const std::string path = options.use_cache ? fashion_mnist_latents_cache_file(options) : "";
    if (!path.empty())
        if (auto cached = load_cached_latents(path, options)) {
            if (progress) progress(1.0);  // as load_or_generate_burgers: one final report
            return *cached;
        }
    Latents out = train_and_encode(options, progress);
    if (!path.empty()) store_cached_latents(path, options, out);
    return out;
}

}  // namespace liftlab
