#include "data/burgers.h"

#include "core/c_numbers.h"
#include "core/numeric.h"
#include "run/tensor_cache.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

namespace liftlab {
namespace {

// Points on the upper half of the unit circle for the contour average of the ETDRK4
// coefficients; 32 keeps them accurate to ~1e−15 where the Taylor-free formulas cancel.
constexpr int64_t kContourPoints = 32;
// Bumped whenever the sampler or solver changes results, so old cache files stop matching.
constexpr const char* kBurgersCacheVersion = "burgers-v1";

void require_burgers(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("burgers: " + what);
}

void validate_burgers(const BurgersOptions& o) {
    require_burgers(o.n_samples() >= 1,
                    "n_samples (" + std::to_string(o.n_samples()) + ") must be at least 1");
    require_burgers(
        o.fine_grid() >= 4 && o.fine_grid() % 2 == 0,
        "fine_grid (" + std::to_string(o.fine_grid()) + ") must be even and at least 4");
    require_burgers(o.resolution() >= 1 && o.fine_grid() % o.resolution() == 0,
                    "resolution (" + std::to_string(o.resolution()) + ") must divide fine_grid (" +
                        std::to_string(o.fine_grid()) + ")");
    require_burgers(std::isfinite(o.viscosity()) && o.viscosity() > 0,
                    "viscosity must be positive");
    require_burgers(std::isfinite(o.final_time()) && o.final_time() >= 0,
                    "final_time must be non-negative");
    require_burgers(std::isfinite(o.time_step()) && o.time_step() > 0,
                    "time_step must be positive");
    require_burgers(o.batch_chunk() >= 1, "batch_chunk must be at least 1");
}

// Equal steps of at most dt (up to 1e-9 relative) that end exactly at T.
int64_t step_count(double final_time, double time_step) {
    if (final_time == 0) return 0;
    return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(final_time / time_step - 1e-9)));
}
int64_t step_count(const BurgersOptions& o) {
    return step_count(o.final_time(), o.time_step());
}

// Every parameter that changes the generated tensors, in a canonical text form.
std::string burgers_cache_key(const BurgersOptions& o) {
    std::ostringstream s;
    s << kBurgersCacheVersion << " n=" << o.n_samples() << " fine=" << o.fine_grid()
      << " s=" << o.resolution() << " nu=" << c_general(o.viscosity(), 17)
      << " T=" << c_general(o.final_time(), 17) << " dt=" << c_general(o.time_step(), 17)
      << " seed=" << o.seed();
    return s.str();
}

std::optional<BurgersData> load_cached_burgers(const std::string& path, const BurgersOptions& o) {
    const auto t = load_keyed_tensors(path, burgers_cache_key(o), 2);
    if (!t) return std::nullopt;
    for (const auto& x : *t)
        if (x.scalar_type() != torch::kFloat32 ||
            x.sizes() != torch::IntArrayRef({o.n_samples(), o.resolution()}) ||
            !torch::isfinite(x).all().item<bool>())
            return std::nullopt;
    return BurgersData{(*t)[0].contiguous(), (*t)[1].contiguous()};
}

void store_cached_burgers(const std::string& path, const BurgersOptions& o, const BurgersData& d) {
    store_keyed_tensors(path, burgers_cache_key(o), {d.u0, d.u_final});
}

}  // namespace

double burgers_initial_variance(int64_t k) {
    const double w = 2.0 * kPi * static_cast<double>(k);
    const double d = w * w + 25.0;
    return 625.0 / (d * d);
}

torch::Tensor sample_burgers_initial(int64_t n, int64_t grid, std::uint64_t seed) {
    require_burgers(n >= 1, "n (" + std::to_string(n) + ") must be at least 1");
    require_burgers(grid >= 4 && grid % 2 == 0,
                    "grid (" + std::to_string(grid) + ") must be even and at least 4");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const int64_t modes = grid / 2 - 1;  // k = 1 … N/2 − 1
    auto xi = torch::randn({n, modes, 2}, gen, f64());
    auto k = torch::arange(1, modes + 1, f64());
    const auto w2 = (2.0 * kPi * k).square();
    auto std_half = (25.0 / (w2 + 25.0)) / std::sqrt(2.0);  // sqrt(λ_k / 2)
    auto c = torch::zeros({n, grid / 2 + 1}, f64().dtype(torch::kComplexDouble));
    c.narrow(1, 1, modes)
        .copy_(torch::complex(xi.select(2, 0) * std_half, xi.select(2, 1) * std_half));
    return torch::fft::irfft(c, grid, /*dim=*/-1, /*norm=*/"forward").contiguous();
}

torch::Tensor solve_burgers(const torch::Tensor& u0, double viscosity, double final_time,
                            double time_step, const BurgersProgress& progress) {
    require_burgers(u0.dim() == 2, "u0 must be n × N");
    const int64_t N = u0.size(1);
    require_burgers(N >= 4 && N % 2 == 0,
                    "grid (" + std::to_string(N) + ") must be even and at least 4");
    require_burgers(std::isfinite(viscosity) && viscosity >= 0, "viscosity must be non-negative");
    require_burgers(std::isfinite(final_time) && final_time >= 0,
                    "final_time must be non-negative");
    require_burgers(std::isfinite(time_step) && time_step > 0, "time_step must be positive");
    auto u = u0.to(torch::kFloat64);
    if (final_time == 0) return u.clone();
    const int64_t steps = step_count(final_time, time_step);
    const double h = final_time / static_cast<double>(steps);

    // 2/3 rule: only the modes m with 3m < N enter the product u², which the N-point grid then
    // computes without aliasing. The modes above are linear and decoupled (they only decay), so
    // the state holds the kept modes and the rest are decayed exactly at the end.
    const int64_t K = N / 2 + 1;
    const int64_t kept = (N - 1) / 3 + 1;
    auto k = 2.0 * kPi * torch::arange(kept, f64());
    auto L = -viscosity * k.square();                         // linear (viscous) symbol
    auto g = torch::complex(torch::zeros_like(k), -0.5 * k);  // −(ik/2)·

    // ETDRK4 coefficients (Kassam & Trefethen 2005, eq. 2.5 with the contour average of §3):
    // averaging over a circle of radius 1 around hL avoids cancellation for small |hL|.
    auto theta = (torch::arange(kContourPoints, f64()) + 0.5) * (kPi / kContourPoints);
    auto r = torch::complex(torch::cos(theta), torch::sin(theta));
    auto LR = (h * L).unsqueeze(1).to(torch::kComplexDouble) + r.unsqueeze(0);
    auto eLR = torch::exp(LR);
    auto LR3 = LR * LR * LR;
    auto avg = [&](const torch::Tensor& z) { return h * torch::real(z.mean(/*dim=*/1)); };
    auto E = torch::exp(h * L);
    auto E2 = torch::exp(0.5 * h * L);
    auto Q = avg((torch::exp(0.5 * LR) - 1.0) / LR);
    auto f1 = avg((-4.0 - LR + eLR * (4.0 - 3.0 * LR + LR * LR)) / LR3);
    auto f2 = avg((2.0 + LR + eLR * (LR - 2.0)) / LR3);
    auto f3 = avg((-4.0 - 3.0 * LR - LR * LR + eLR * (4.0 - LR)) / LR3);

    // −(u²/2)_x on the kept modes; irfft zero-pads the kept modes to the full N-point grid.
    auto nonlinear = [&](const torch::Tensor& v) {
        auto w = torch::fft::irfft(v, N, /*dim=*/-1, /*norm=*/"forward");
        auto p = torch::fft::rfft(w * w, c10::nullopt, /*dim=*/-1, /*norm=*/"forward");
        return g * p.narrow(/*dim=*/-1, /*start=*/0, kept);
    };

    torch::NoGradGuard no_grad;
    auto spectrum = torch::fft::rfft(u, c10::nullopt, /*dim=*/-1, /*norm=*/"forward");
    auto v = spectrum.narrow(/*dim=*/-1, 0, kept).clone();
    for (int64_t step = 1; step <= steps; ++step) {
        auto Nv = nonlinear(v);
        auto a = E2 * v + Q * Nv;
        auto Na = nonlinear(a);
        auto b = E2 * v + Q * Na;
        auto Nb = nonlinear(b);
        auto c = E2 * a + Q * (2.0 * Nb - Nv);
        auto Nc = nonlinear(c);
        v = E * v + f1 * Nv + 2.0 * f2 * (Na + Nb) + f3 * Nc;
        if (progress && !progress(static_cast<double>(step) / static_cast<double>(steps)))
            throw BurgersCancelled();
    }
    if (!torch::isfinite(v).all().item<bool>()) {
        std::ostringstream what;
        what << "burgers: the solution became non-finite (viscosity " << viscosity << ", time_step "
             << time_step << "); reduce time_step";
        throw std::runtime_error(what.str());
    }
    auto m_high = torch::arange(kept, K, f64());
    auto decay = torch::exp(-viscosity * (2.0 * kPi * m_high).square() * final_time);
    auto high = spectrum.narrow(/*dim=*/-1, kept, K - kept) * decay;
    return torch::fft::irfft(torch::cat({v, high}, /*dim=*/-1), N, /*dim=*/-1, /*norm=*/"forward")
        .contiguous();
}

BurgersData generate_burgers(const BurgersOptions& options, const BurgersProgress& progress) {
    validate_burgers(options);
    const int64_t n = options.n_samples(), N = options.fine_grid();
    const int64_t stride = N / options.resolution();
    const int64_t chunk = options.batch_chunk();
    const int64_t chunks = (n + chunk - 1) / chunk;
    auto u0 = sample_burgers_initial(n, N, options.seed());
    auto uT = torch::empty({n, options.resolution()}, torch::kFloat32);

    // Chunks run one after the other; inside a chunk the ops use LibTorch's intra-op threads as
    // the caller configured them. Progress counts sample-steps over all chunks.
    const double total = static_cast<double>(n * std::max<int64_t>(1, step_count(options)));
    int64_t done = 0;
    for (int64_t i = 0; i < chunks; ++i) {
        const int64_t start = i * chunk, len = std::min(chunk, n - start);
        BurgersProgress step_done;
        if (progress) {
            step_done = [&](double) {
                done += len;
                return progress(static_cast<double>(done) / total);
            };
        }
        auto u = solve_burgers(u0.narrow(0, start, len), options.viscosity(), options.final_time(),
                               options.time_step(), step_done);
        uT.narrow(0, start, len).copy_(u.slice(/*dim=*/1, 0, N, stride));
    }
    return {u0.slice(/*dim=*/1, 0, N, stride).to(torch::kFloat32).contiguous(), uT};
}

std::string burgers_cache_file(const BurgersOptions& options, const std::string& cache_dir) {
    std::ostringstream name;
    name << "burgers-" << std::hex << std::setw(16) << std::setfill('0')
         << fnv1a64(burgers_cache_key(options)) << ".pt";
    return (std::filesystem::path(cache_dir) / name.str()).string();
}

BurgersData load_or_generate_burgers(const BurgersOptions& options, const std::string& cache_dir,
                                     const BurgersProgress& progress) {
    validate_burgers(options);
    if (cache_dir.empty()) return generate_burgers(options, progress);
    const std::string path = burgers_cache_file(options, cache_dir);
    if (auto cached = load_cached_burgers(path, options)) {
        if (progress) progress(1.0);
        return *cached;
    }
    auto data = generate_burgers(options, progress);
    store_cached_burgers(path, options, data);
    return data;
}

}  // namespace liftlab
