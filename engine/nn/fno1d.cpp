#include "nn/fno1d.h"

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "core/numeric.h"

namespace liftlab {
namespace {

void require_fno(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("fno1d: " + what);
}

// The truncated real DFT pair of a grid of s points and its lowest m modes, as two matrices:
// forward (s, 2m), columns [Re X_k, Im X_k] = [Σ_t x_t cos(2πkt/s), −Σ_t x_t sin(2πkt/s)] (what
// rfft gives for k < m), and inverse (2m, s), what irfft does to a half spectrum whose modes from m
// up are zero: x_t = Σ_k c_k (Re Y_k cos(2πkt/s) − Im Y_k sin(2πkt/s)) with c_0 = 1/s, c_k = 2/s,
// and 1/s for the Nyquist mode k = s/2 (the sine rows of k = 0 and s/2 are zero, so their
// imaginary parts drop out as irfft drops them). With m ≪ s two thin matrix products do the work of
// rfft and irfft (and their backward passes) at a fraction of the cost. Built in float64, cached
// per (s, m, dtype, device); cached tensors are never written, so threads may share them.
struct DftMatrices {
    torch::Tensor forward;  // (s, 2m)
    torch::Tensor inverse;  // (2m, s)
};

DftMatrices truncated_dft(int64_t s, int64_t m, const torch::TensorOptions& like) {
    static std::mutex mutex;
    static std::map<std::tuple<int64_t, int64_t, int, std::string>, DftMatrices> cache;
    const auto key =
        std::make_tuple(s, m, static_cast<int>(like.dtype().toScalarType()), like.device().str());
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
    // k·t mod s keeps the angles in [0, 2π) exactly, so large grids lose no accuracy.
    const auto k = torch::arange(m, torch::TensorOptions().dtype(torch::kInt64));
    const auto t = torch::arange(s, torch::TensorOptions().dtype(torch::kInt64));
    const auto angle = torch::remainder(torch::outer(t, k), s).to(f64) * (2.0 * kPi / s);
    const auto c = torch::cos(angle), sn = torch::sin(angle);  // (s, m)
    auto weight = torch::full({m}, 2.0 / s, f64);
    weight[0] = 1.0 / s;
    if (s % 2 == 0 && m > s / 2) weight[s / 2] = 1.0 / s;
    DftMatrices mats{torch::cat({c, -sn}, /*dim=*/1).to(like),
                     torch::cat({c.t() * weight.unsqueeze(1), -sn.t() * weight.unsqueeze(1)},
                                /*dim=*/0)
                         .to(like)};
    if (cache.size() >= 32) cache.clear();  // grids seen by one process are few; stay bounded
    cache.emplace(key, mats);
    return mats;
}

}  // namespace

SpectralConv1dImpl::SpectralConv1dImpl(const SpectralConv1dOptions& options) : options_(options) {
    require_fno(options.in_channels() >= 1 && options.out_channels() >= 1,
                "spectral layer channels must be at least 1");
    require_fno(options.modes() >= 1,
                "modes (" + std::to_string(options.modes()) + ") must be at least 1");
    const double scale = 1.0 / static_cast<double>(options.in_channels() * options.out_channels());
    // Drawn in the reference's (in, out, modes) order, stored mode-major: the same initial values
    // as the reference's layout, and each mode's (in, out) block contiguous for the mixing product.
    const std::vector<int64_t> drawn = {options.in_channels(), options.out_channels(),
                                        options.modes()};
    auto mode_major = [](const torch::Tensor& t) { return t.permute({2, 0, 1}).contiguous(); };
    weight_real = register_parameter("weight_real", mode_major(scale * torch::rand(drawn)));
    weight_imag = register_parameter("weight_imag", mode_major(scale * torch::rand(drawn)));
}

torch::Tensor SpectralConv1dImpl::forward(const torch::Tensor& x) {
    require_fno(
        x.dim() == 3 && x.size(1) == options_.in_channels(),
        "spectral layer input must be (n, " + std::to_string(options_.in_channels()) + ", s)");
    return forward_channels_last(x.transpose(1, 2)).transpose(1, 2);
}

torch::Tensor SpectralConv1dImpl::forward_channels_last(const torch::Tensor& x) {
    require_fno(
        x.dim() == 3 && x.size(2) == options_.in_channels(),
        "spectral layer input must be (n, s, " + std::to_string(options_.in_channels()) + ")");
    const int64_t s = x.size(1);
    const int64_t available = s / 2 + 1;
    require_fno(options_.modes() <= available,
                "modes (" + std::to_string(options_.modes()) +
                    ") exceeds the s/2 + 1 = " + std::to_string(available) +
                    " Fourier modes of a grid of s = " + std::to_string(s) + " points");
    const int64_t n = x.size(0), in = options_.in_channels(), out = options_.out_channels();
    const int64_t m = options_.modes();
    const auto dft = truncated_dft(s, m, x.options());
    // [Re, Im] of the kept modes, then one real product per mode: [xr, xi] · [[wr, wi], [−wi, wr]]
    // = [xr wr − xi wi, xr wi + xi wr], the complex product R·X written in real arithmetic.
    auto spectrum = torch::bmm(dft.forward.t().expand({n, 2 * m, s}), x)  // (n, 2m, in)
                        .view({n, 2, m, in})
                        .permute({2, 0, 1, 3})
                        .reshape({m, n, 2 * in});
    auto mixing = torch::cat({torch::cat({weight_real, weight_imag}, /*dim=*/2),
                              torch::cat({-weight_imag, weight_real}, /*dim=*/2)},
                             /*dim=*/1);       // (m, 2in, 2out)
    auto mixed = torch::bmm(spectrum, mixing)  // (m, n, 2out)
                     .view({m, n, 2, out})
                     .permute({1, 2, 0, 3})
                     .reshape({n, 2 * m, out});
    return torch::bmm(dft.inverse.t().expand({n, s, 2 * m}), mixed);  // (n, s, out)
}

Fno1dImpl::Fno1dImpl(const Fno1dOptions& options) : options_(options) {
    require_fno(options.modes() >= 1,
                "modes (" + std::to_string(options.modes()) + ") must be at least 1");
    require_fno(options.width() >= 1, "width must be at least 1");
    require_fno(options.layers() >= 1, "layers must be at least 1");
    require_fno(options.projection() >= 1, "projection must be at least 1");
    require_fno(options.input_channels() >= 1, "input_channels must be at least 1");
    lift_ =
        register_module("lift", torch::nn::Linear(options.input_channels() + 1, options.width()));
    for (int64_t i = 0; i < options.layers(); ++i) {
        spectral_->push_back(SpectralConv1d(
            SpectralConv1dOptions(options.width(), options.width(), options.modes())));
        // The reference's 1×1 Conv1d as a Linear over channels-last points: the same initial
        // values (both init weight then bias with fan-in = width), one matrix product.
        pointwise_->push_back(torch::nn::Linear(options.width(), options.width()));
    }
    register_module("spectral", spectral_);
    register_module("pointwise", pointwise_);
    project_ = register_module("project", torch::nn::Linear(options.width(), options.projection()));
}

torch::Tensor Fno1dImpl::forward(torch::Tensor x) {
    const int64_t c = options_.input_channels();
    if (x.dim() == 2 && c == 1) x = x.unsqueeze(-1);
    require_fno(x.dim() == 3 && x.size(2) == c,
                "input must be (n, s" + std::string(c == 1 ? "" : ", " + std::to_string(c)) + ")" +
                    (c == 1 ? " or (n, s, 1)" : ""));
    const int64_t n = x.size(0), s = x.size(1);
    auto grid = (torch::arange(s, x.options()) / static_cast<double>(s)).view({1, s, 1});
    auto h = lift_(torch::cat({x, grid.expand({n, s, 1})}, /*dim=*/-1));
    // (n, s, width) throughout: every pointwise map is one matrix product over the n·s points.
    for (int64_t i = 0; i < options_.layers(); ++i) {
        auto y = spectral_->at<SpectralConv1dImpl>(i).forward_channels_last(h) +
                 pointwise_->at<torch::nn::LinearImpl>(i).forward(h);
        h = i + 1 < options_.layers() ? torch::gelu(y) : y;
    }
    return torch::gelu(project_(h));
}

}  // namespace liftlab
