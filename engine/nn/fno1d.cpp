#include "nn/fno1d.h"

#include <stdexcept>
#include <string>

namespace liftlab {
namespace {

void require_fno(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("fno1d: " + what);
}

// Σ_i a[b, i, x] w[i, o, x] for every kept mode x (the reference's compl_mul1d, real part).
torch::Tensor mode_mul(const torch::Tensor& a, const torch::Tensor& w) {
    return torch::einsum("bix,iox->box", {a, w});
}

}  // namespace

SpectralConv1dImpl::SpectralConv1dImpl(const SpectralConv1dOptions& options) : options_(options) {
    require_fno(options.in_channels() >= 1 && options.out_channels() >= 1,
                "spectral layer channels must be at least 1");
    require_fno(options.modes() >= 1,
                "modes (" + std::to_string(options.modes()) + ") must be at least 1");
    const double scale = 1.0 / static_cast<double>(options.in_channels() * options.out_channels());
    const std::vector<int64_t> shape = {options.in_channels(), options.out_channels(),
                                        options.modes()};
    weight_real = register_parameter("weight_real", scale * torch::rand(shape));
    weight_imag = register_parameter("weight_imag", scale * torch::rand(shape));
}

torch::Tensor SpectralConv1dImpl::forward(const torch::Tensor& x) {
    require_fno(
        x.dim() == 3 && x.size(1) == options_.in_channels(),
        "spectral layer input must be (n, " + std::to_string(options_.in_channels()) + ", s)");
    const int64_t s = x.size(2);
    const int64_t available = s / 2 + 1;
    require_fno(options_.modes() <= available,
                "modes (" + std::to_string(options_.modes()) +
                    ") exceeds the s/2 + 1 = " + std::to_string(available) +
                    " Fourier modes of a grid of s = " + std::to_string(s) + " points");
    auto xf = torch::fft::rfft(x).narrow(/*dim=*/-1, /*start=*/0, options_.modes());
    auto xr = torch::real(xf);
    auto xi = torch::imag(xf);
    // (xr + i xi)(wr + i wi), then the modes above `modes` are zero.
    auto yr = mode_mul(xr, weight_real) - mode_mul(xi, weight_imag);
    auto yi = mode_mul(xr, weight_imag) + mode_mul(xi, weight_real);
    const int64_t pad = available - options_.modes();
    yr = torch::constant_pad_nd(yr, {0, pad});
    yi = torch::constant_pad_nd(yi, {0, pad});
    return torch::fft::irfft(torch::complex(yr, yi), s);
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
        pointwise_->push_back(torch::nn::Conv1d(
            torch::nn::Conv1dOptions(options.width(), options.width(), /*kernel_size=*/1)));
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
    h = h.permute({0, 2, 1});  // (n, width, s): channels first for the Fourier layers
    for (int64_t i = 0; i < options_.layers(); ++i) {
        auto y = spectral_->at<SpectralConv1dImpl>(i).forward(h) +
                 pointwise_->at<torch::nn::Conv1dImpl>(i).forward(h);
        h = i + 1 < options_.layers() ? torch::gelu(y) : y;
    }
    h = h.permute({0, 2, 1});
    return torch::gelu(project_(h));
}

}  // namespace liftlab
