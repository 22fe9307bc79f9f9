#include "diagnostics/landscape.h"

#include "core/numeric.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/bounded_input.h"
#include "core/errors.h"
#include "run/run_store.h"

namespace liftlab {

namespace {

namespace fs = std::filesystem;
using torch::Tensor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A second principal variance below this fraction of the first is rounding noise of the Gram
// matrix (its eigenvalues carry absolute errors ~ 1e-16 × the largest): the trajectory is a line.
constexpr double kDegenerateVariance = 1e-12;
constexpr uint64_t kCompletionSeed = 0x6c616e6473636170ull;  // fixed: completions are reproducible
constexpr const char* kFormat = "liftlab-landscape";
constexpr int kVersion = 1;

Tensor as_f64(const Tensor& t) {
    return t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
}

double dot_value(const Tensor& a, const Tensor& b) {
    return a.dot(b).item<double>();
}
double norm_value(const Tensor& a) {
    return a.norm().item<double>();
}

Tensor checked_trajectory(const Tensor& trajectory, const char* who, int64_t min_rows) {
    if (!trajectory.defined() || trajectory.dim() != 2)
        throw std::invalid_argument(std::string(who) + ": trajectory must be a T × P matrix");
    if (trajectory.size(0) < min_rows)
        throw std::invalid_argument(std::string(who) + ": trajectory needs at least " +
                                    std::to_string(min_rows) +
                                    " rows (T = " + std::to_string(trajectory.size(0)) + ")");
    return as_f64(trajectory);
}

Tensor checked_vector(const Tensor& v, int64_t p, const char* who, const char* name) {
    if (!v.defined() || v.dim() != 1 || v.size(0) != p)
        throw std::invalid_argument(std::string(who) + ": " + name +
                                    " must be a vector of length " + std::to_string(p) +
                                    (v.defined() ? " (got " + std::to_string(v.numel()) + " values)"
                                                 : std::string(" (undefined)")));
    return as_f64(v);
}

// X = trajectory − offset (row-wise), never materialised: callers stream over column blocks of
// ~2^20 entries held in one reused buffer, so the extra memory is O(T² + P) however large P is.
class CentredRows {
public:
    CentredRows(Tensor trajectory, Tensor offset)
        : traj_(std::move(trajectory)), offset_(std::move(offset)) {
        block_ = std::max<int64_t>(1024, (int64_t(1) << 20) / std::max<int64_t>(1, traj_.size(0)));
        block_ = std::min(block_, std::max<int64_t>(1, cols()));
    }

    int64_t rows() const { return traj_.size(0); }
    int64_t cols() const { return traj_.size(1); }

    // X Xᵀ (T × T); with `u` (P) also X u (T) in the same pass.
    Tensor gram(const Tensor& u = {}, Tensor* xu = nullptr) const {
        auto g = torch::zeros({rows(), rows()}, f64());
        if (xu) *xu = torch::zeros({rows()}, f64());
        for_each_block([&](int64_t s, int64_t n, const Tensor& x) {
            g.addmm_(x, x.t());
            if (xu) xu->addmv_(x, u.narrow(0, s, n));
        });
        return g;
    }

    // Xᵀ V (P × k) for V: T × k.
    Tensor transpose_times(const Tensor& v) const {
        auto out = torch::empty({cols(), v.size(1)}, f64());
        for_each_block([&](int64_t s, int64_t n, const Tensor& x) {
            out.narrow(0, s, n).copy_(x.t().matmul(v));
        });
        return out;
    }

    // X W (T × k) for W: P × k.
    Tensor times(const Tensor& w) const {
        auto out = torch::zeros({rows(), w.size(1)}, f64());
        for_each_block(
            [&](int64_t s, int64_t n, const Tensor& x) { out.addmm_(x, w.narrow(0, s, n)); });
        return out;
    }

    // f(start, length, X[:, start:start+length]) over consecutive column blocks. The block is a
    // view of a reused buffer: valid only during the call.
    template <class F>
    void for_each_block(F&& f) const {
        const int64_t p = cols(), t = rows();
        auto buffer = torch::empty({t * block_}, f64());
        for (int64_t s = 0; s < p; s += block_) {
            const int64_t n = std::min(block_, p - s);
            auto x = buffer.narrow(0, 0, t * n).view({t, n});
            torch::sub_out(x, traj_.narrow(1, s, n), offset_.narrow(0, s, n));
            f(s, n, x);
        }
    }

private:
    Tensor traj_, offset_;
    int64_t block_ = 1024;
};

// Top-k eigenpairs of a symmetric matrix, largest first: (values k, vectors T × k).
std::pair<Tensor, Tensor> top_eigen(const Tensor& sym, int64_t k) {
    auto [values, vectors] = torch::linalg_eigh(sym);  // ascending
    const int64_t n = values.size(0);
    return {values.narrow(0, n - k, k).flip(0), vectors.narrow(1, n - k, k).flip(1)};
}

// The sign that makes the largest-|entry| positive (the first such entry on ties).
Tensor fix_sign(const Tensor& d) {
    const int64_t i = d.abs().argmax().item<int64_t>();
    return d[i].item<double>() < 0 ? -d : d;
}

// Unit vector along v with its component along unit u removed (Gram–Schmidt applied twice, which
// makes the result orthogonal to u to rounding). Returns an undefined tensor when nothing is left.
Tensor orthonormal_to(const Tensor& v, const Tensor& u) {
    auto w = v - dot_value(v, u) * u;
    w.sub_(dot_value(w, u) * u);
    const double n = norm_value(w);
    if (!(n > 0) || !std::isfinite(n)) return {};
    return w / n;
}

// A reproducible unit vector orthogonal to unit u (P ≥ 2): completes a plane when the trajectory
// spans a line.
Tensor completion(const Tensor& u) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(kCompletionSeed);
    for (int attempt = 0; attempt < 8; ++attempt) {
        auto w = orthonormal_to(torch::randn({u.size(0)}, gen, f64()), u);
        if (w.defined()) return fix_sign(w);
    }
    throw std::runtime_error("landscape: cannot complete the plane");  // unreachable for P ≥ 2
}

void check_columns(const Tensor& traj, const char* who) {
    if (traj.size(1) < 2)
        throw std::invalid_argument(
            std::string(who) +
            ": trajectory needs at least 2 parameters (P = " + std::to_string(traj.size(1)) + ")");
}

class Fnv1a64 {
public:
    void bytes(const void* data, size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (size_t i = 0; i < n; ++i) {
            h_ ^= p[i];
            h_ *= 1099511628211ull;
        }
    }
    void u64(uint64_t v) { bytes(&v, sizeof v); }
    void f64(double v) { bytes(&v, sizeof v); }
    void str(const std::string& s) {
        u64(s.size());
        bytes(s.data(), s.size());
    }
    void tensor(const Tensor& t) {
        const auto c = t.defined() ? as_f64(t).reshape(-1) : torch::empty({0}, liftlab::f64());
        u64(static_cast<uint64_t>(c.numel()));
        bytes(c.data_ptr<double>(), static_cast<size_t>(c.numel()) * sizeof(double));
    }
    std::string hex() const {
        char buf[17];
        std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
        return buf;
    }

private:
    uint64_t h_ = 14695981039346656037ull;
};

nlohmann::json number_or_null(double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}
double number_from(const nlohmann::json& v) {
    return v.is_null() ? kNaN : v.get<double>();
}

void check_range(const LandscapeRange& r, const char* who) {
    const bool ok = std::isfinite(r.alpha_min) && std::isfinite(r.alpha_max) &&
                    std::isfinite(r.beta_min) && std::isfinite(r.beta_max) &&
                    r.alpha_max > r.alpha_min && r.beta_max > r.beta_min;
    if (!ok)
        throw std::invalid_argument(std::string(who) +
                                    ": range must be finite with alpha_max > alpha_min and "
                                    "beta_max > beta_min");
}

double grid_point(double lo, double hi, int i, int n, const char* axis) {
    if (i < 0 || i >= n)
        throw std::out_of_range(std::string("LandscapeGrid: ") + axis + " index " +
                                std::to_string(i) + " outside [0, " + std::to_string(n) + ")");
    if (n < 2) return lo;
    const double t = static_cast<double>(i) / (n - 1);
    return (1 - t) * lo + t * hi;  // exact at both ends
}

}  // namespace

int64_t ParameterLayout::numel() const {
    int64_t total = 0;
    for (const auto& shape : shapes) {
        int64_t n = 1;
        for (int64_t s : shape) n *= s;
        total += n;
    }
    return total;
}

PlaneDirections random_filter_normalised_directions(const torch::Tensor& center_in,
                                                    const ParameterLayout& layout, uint64_t seed) {
    torch::NoGradGuard no_grad;
    const char* who = "random_filter_normalised_directions";
    if (!center_in.defined() || center_in.dim() != 1)
        throw std::invalid_argument(std::string(who) + ": center must be a flat vector");
    for (const auto& shape : layout.shapes)
        for (int64_t s : shape)
            if (s < 0)
                throw std::invalid_argument(std::string(who) + ": layout has a negative size");
    const int64_t p = center_in.size(0);
    if (layout.numel() != p)
        throw std::invalid_argument(std::string(who) + ": layout holds " +
                                    std::to_string(layout.numel()) +
                                    " values but center has P = " + std::to_string(p));
    const auto center = as_f64(center_in);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    PlaneDirections dirs{"random", torch::randn({p}, gen, f64()), torch::randn({p}, gen, f64())};

    int64_t offset = 0;
    for (const auto& shape : layout.shapes) {
        int64_t n = 1;
        for (int64_t s : shape) n *= s;
        if (n == 0) continue;
        const int64_t filters = shape.size() >= 2 ? shape[0] : 1;
        const auto c = center.narrow(0, offset, n).view({filters, n / filters});
        const auto c_norm = c.norm(2, {1}, /*keepdim=*/true);
        for (auto* d : {&dirs.d1, &dirs.d2}) {
            auto v = d->narrow(0, offset, n).view({filters, n / filters});
            const auto d_norm = v.norm(2, {1}, /*keepdim=*/true);
            // A zero centre filter → zero direction (also guards the 0/0 of a zero draw).
            auto scale = torch::where(c_norm > 0, c_norm / d_norm, torch::zeros_like(c_norm));
            v.mul_(scale);  // in place through the view
        }
        offset += n;
    }
    return dirs;
}

PlaneDirections pca_directions(const torch::Tensor& trajectory) {
    torch::NoGradGuard no_grad;
    const char* who = "pca_directions";
    const auto traj = checked_trajectory(trajectory, who, 2);
    check_columns(traj, who);
    // Checked exactly: the mean of equal rows need not round back to the row, which would leave
    // rounding noise to be mistaken for variance.
    bool all_equal = true;
    for (int64_t t = 1; t < traj.size(0) && all_equal; ++t)
        all_equal = torch::equal(traj[t], traj[0]);
    if (all_equal)
        throw std::invalid_argument(std::string(who) + ": trajectory rows are all equal");
    CentredRows x(traj, traj.mean(0));
    auto [values, vectors] = top_eigen(x.gram(), 2);
    const double l1 = values[0].item<double>(), l2 = values[1].item<double>();
    if (!(l1 > 0) || !std::isfinite(l1))
        throw std::invalid_argument(std::string(who) + ": trajectory has no usable variance");
    const bool planar = l2 > kDegenerateVariance * l1;
    const auto u = x.transpose_times(planar ? vectors : vectors.narrow(1, 0, 1));
    const auto c1 = u.select(1, 0);
    const double n1 = norm_value(c1);
    if (!(n1 > 0) || !std::isfinite(n1))
        throw std::invalid_argument(std::string(who) + ": trajectory has no usable variance");
    PlaneDirections dirs{"pca", fix_sign(c1 / n1), {}};
    Tensor d2 = planar ? orthonormal_to(u.select(1, 1), dirs.d1) : Tensor();
    dirs.d2 = d2.defined() ? fix_sign(d2) : completion(dirs.d1);
    return dirs;
}

PlaneDirections delta_pca_directions(const torch::Tensor& trajectory) {
    torch::NoGradGuard no_grad;
    const char* who = "delta_pca_directions";
    const auto traj = checked_trajectory(trajectory, who, 2);
    check_columns(traj, who);
    const auto delta = traj[traj.size(0) - 1] - traj[0];
    const double delta_norm = norm_value(delta);
    if (!(delta_norm > 0) || !std::isfinite(delta_norm))
        throw std::invalid_argument(std::string(who) +
                                    ": trajectory's last row equals its first (zero delta)");
    PlaneDirections dirs{"delta-pca", delta / delta_norm, {}};
    // With c = X d1, the deflated rows X' = X − c d1ᵀ have X'X'ᵀ = XXᵀ − c cᵀ (‖d1‖ = 1) and
    // X'ᵀv = (I − d1 d1ᵀ) Xᵀv: one pass for the Gram matrix, one for the direction, no copy of X.
    // The subtraction costs ~1e-16 ‖XXᵀ‖ absolute, small against any usable residual variance.
    CentredRows x(traj, traj.mean(0));
    Tensor c;
    const auto g = x.gram(dirs.d1, &c);
    const double total = g.trace().item<double>();
    auto [values, vectors] = top_eigen(g - torch::outer(c, c), 1);
    Tensor d2;
    if (values[0].item<double>() > kDegenerateVariance * total)
        d2 = orthonormal_to(x.transpose_times(vectors).select(1, 0), dirs.d1);
    dirs.d2 = d2.defined() ? fix_sign(d2) : completion(dirs.d1);
    return dirs;
}

torch::Tensor project_onto_plane(const torch::Tensor& trajectory, const torch::Tensor& center_in,
                                 const PlaneDirections& dirs, torch::Tensor* relative_residual) {
    torch::NoGradGuard no_grad;
    const char* who = "project_onto_plane";
    const auto traj = checked_trajectory(trajectory, who, 0);
    const int64_t p = traj.size(1);
    const auto center = checked_vector(center_in, p, who, "center");
    const auto d1 = checked_vector(dirs.d1, p, who, "dirs.d1");
    const auto d2 = checked_vector(dirs.d2, p, who, "dirs.d2");

    // [d1 d2] = [q1 q2] [[r11, r12], [0, r22]] by Gram–Schmidt applied twice.
    const double r11 = norm_value(d1);
    if (!(r11 > 0) || !std::isfinite(r11))
        throw std::invalid_argument(std::string(who) + ": dirs.d1 is zero or not finite");
    const auto q1 = d1 / r11;
    double r12 = dot_value(q1, d2);
    auto w = d2 - r12 * q1;
    const double correction = dot_value(q1, w);
    w.sub_(correction * q1);
    r12 += correction;
    const double r22 = norm_value(w);
    if (!(r22 > 1e-12 * norm_value(d2)) || !std::isfinite(r22))
        throw std::invalid_argument(std::string(who) +
                                    ": dirs.d1 and dirs.d2 are linearly dependent");
    const auto q = torch::stack({q1, w / r22}, 1);  // P × 2

    CentredRows x(traj, center);
    const auto y = x.times(q);  // T × 2: Qᵀ(r − center) per row
    const auto beta = y.select(1, 1) / r22;
    const auto alpha = (y.select(1, 0) - r12 * beta) / r11;
    auto coords = torch::stack({alpha, beta}, 1);

    if (relative_residual) {
        const auto d = torch::stack({d1, d2}, 1);  // P × 2
        auto res2 = torch::zeros({x.rows()}, f64()), norm2 = torch::zeros({x.rows()}, f64());
        x.for_each_block([&](int64_t s, int64_t n, const Tensor& blk) {
            norm2.add_(blk.pow(2).sum(1));
            res2.add_((blk - coords.matmul(d.narrow(0, s, n).t())).pow(2).sum(1));
        });
        *relative_residual =
            torch::where(norm2 > 0, (res2 / norm2).sqrt(), torch::zeros_like(res2));
    }
    return coords;
}

LandscapeRange range_covering(const torch::Tensor& coords_in, double margin,
                              double min_half_width) {
    const char* who = "range_covering";
    if (!coords_in.defined() || coords_in.dim() != 2 || coords_in.size(1) != 2)
        throw std::invalid_argument(std::string(who) + ": coords must be a T × 2 matrix");
    if (!(margin >= 0) || !std::isfinite(margin))
        throw std::invalid_argument(std::string(who) + ": margin must be ≥ 0");
    if (!(min_half_width > 0) || !std::isfinite(min_half_width))
        throw std::invalid_argument(std::string(who) + ": min_half_width must be > 0");
    const auto coords = as_f64(coords_in);
    if (!torch::isfinite(coords).all().item<bool>())
        throw std::invalid_argument(std::string(who) + ": coords must be finite");
    double lo[2] = {0, 0}, hi[2] = {0, 0};  // the origin (the centre of the plane) is always in
    if (coords.size(0) > 0) {
        for (int k = 0; k < 2; ++k) {
            lo[k] = std::min(0.0, coords.select(1, k).min().item<double>());
            hi[k] = std::max(0.0, coords.select(1, k).max().item<double>());
        }
    }
    for (int k = 0; k < 2; ++k) {
        const double span = hi[k] - lo[k];
        lo[k] -= margin * span;
        hi[k] += margin * span;
        if ((hi[k] - lo[k]) / 2 < min_half_width) {
            const double mid = (hi[k] + lo[k]) / 2;
            lo[k] = mid - min_half_width;
            hi[k] = mid + min_half_width;
        }
    }
    return {lo[0], hi[0], lo[1], hi[1]};
}

double LandscapeGrid::at(int i_alpha, int i_beta) const {
    if (i_alpha < 0 || i_alpha >= n_alpha || i_beta < 0 || i_beta >= n_beta)
        throw std::out_of_range("LandscapeGrid::at: cell (" + std::to_string(i_alpha) + ", " +
                                std::to_string(i_beta) + ") outside " + std::to_string(n_alpha) +
                                " × " + std::to_string(n_beta));
    return loss.at(static_cast<size_t>(i_beta) * n_alpha + i_alpha);
}

double LandscapeGrid::alpha(int i) const {
    return grid_point(range.alpha_min, range.alpha_max, i, n_alpha, "alpha");
}

double LandscapeGrid::beta(int j) const {
    return grid_point(range.beta_min, range.beta_max, j, n_beta, "beta");
}

LandscapeGrid compute_landscape(const torch::Tensor& center_in, const PlaneDirections& dirs,
                                const LandscapeRange& range, int n_alpha, int n_beta,
                                const BatchLoss& loss, int cells_per_batch,
                                const LandscapeProgress& progress) {
    const char* who = "compute_landscape";
    if (!center_in.defined() || center_in.dim() != 1)
        throw std::invalid_argument(std::string(who) + ": center must be a flat vector");
    const int64_t p = center_in.size(0);
    const auto center = as_f64(center_in);
    const auto d1 = checked_vector(dirs.d1, p, who, "dirs.d1");
    const auto d2 = checked_vector(dirs.d2, p, who, "dirs.d2");
    check_range(range, who);
    if (n_alpha < 2) throw std::invalid_argument(std::string(who) + ": n_alpha must be ≥ 2");
    if (n_beta < 2) throw std::invalid_argument(std::string(who) + ": n_beta must be ≥ 2");
    if (cells_per_batch < 1)
        throw std::invalid_argument(std::string(who) + ": cells_per_batch must be ≥ 1");
    if (!loss) throw std::invalid_argument(std::string(who) + ": loss is empty");

    LandscapeGrid grid;
    grid.n_alpha = n_alpha;
    grid.n_beta = n_beta;
    grid.range = range;
    const int64_t cells = static_cast<int64_t>(n_alpha) * n_beta;
    grid.loss.assign(static_cast<size_t>(cells), kNaN);

    for (int64_t start = 0; start < cells; start += cells_per_batch) {
        const int64_t c = std::min<int64_t>(cells_per_batch, cells - start);
        auto a = torch::empty({c}, f64()), b = torch::empty({c}, f64());
        auto* pa = a.data_ptr<double>();
        auto* pb = b.data_ptr<double>();
        for (int64_t k = 0; k < c; ++k) {
            pa[k] = grid.alpha(static_cast<int>((start + k) % n_alpha));
            pb[k] = grid.beta(static_cast<int>((start + k) / n_alpha));
        }
        Tensor params;
        {
            torch::NoGradGuard no_grad;
            params = center.unsqueeze(0).expand({c, p}).clone();
            params.addr_(a, d1);
            params.addr_(b, d2);
        }
        const Tensor out = loss(params);
        if (!out.defined() || out.numel() != c)
            throw std::invalid_argument(
                std::string(who) + ": loss returned " +
                (out.defined() ? std::to_string(out.numel()) : std::string("no")) +
                " values for a batch of " + std::to_string(c) + " cells");
        const auto values = as_f64(out).reshape(-1);
        const auto* pv = values.data_ptr<double>();
        for (int64_t k = 0; k < c; ++k)
            grid.loss[static_cast<size_t>(start + k)] = std::isfinite(pv[k]) ? pv[k] : kNaN;
        const int64_t done = start + c;
        const double fraction = done == cells ? 1.0 : static_cast<double>(done) / cells;
        if (progress && !progress(fraction)) throw LandscapeCancelled();
    }
    return grid;
}

std::string landscape_cache_key(const torch::Tensor& center, const PlaneDirections& dirs,
                                const LandscapeRange& range, int n_alpha, int n_beta,
                                const std::string& tag) {
    torch::NoGradGuard no_grad;
    Fnv1a64 h;
    h.str(std::string(kFormat) + "/" + std::to_string(kVersion));
    h.tensor(center);
    h.tensor(dirs.d1);
    h.tensor(dirs.d2);
    h.str(dirs.kind);
    for (double v : {range.alpha_min, range.alpha_max, range.beta_min, range.beta_max}) h.f64(v);
    h.u64(static_cast<uint64_t>(static_cast<int64_t>(n_alpha)));
    h.u64(static_cast<uint64_t>(static_cast<int64_t>(n_beta)));
    h.str(tag);
    return h.hex();
}

void save_landscape(const std::string& path, const std::string& key, const LandscapeGrid& grid,
                    const std::string& direction_kind, const PlaneTrajectories& trajectories) {
    if (grid.n_alpha < 0 || grid.n_beta < 0 ||
        grid.loss.size() != static_cast<size_t>(grid.n_alpha) * static_cast<size_t>(grid.n_beta))
        throw std::invalid_argument(
            "save_landscape: grid holds " + std::to_string(grid.loss.size()) + " losses for " +
            std::to_string(grid.n_alpha) + " × " + std::to_string(grid.n_beta) + " cells");
    nlohmann::json j;
    j["format"] = kFormat;
    j["version"] = kVersion;
    j["key"] = key;
    j["direction_kind"] = direction_kind;
    j["n_alpha"] = grid.n_alpha;
    j["n_beta"] = grid.n_beta;
    j["range"] = {{"alpha_min", grid.range.alpha_min},
                  {"alpha_max", grid.range.alpha_max},
                  {"beta_min", grid.range.beta_min},
                  {"beta_max", grid.range.beta_max}};
    auto losses = nlohmann::json::array();
    for (double v : grid.loss) losses.push_back(number_or_null(v));
    j["loss"] = std::move(losses);
    auto paths = nlohmann::json::object();
    for (const auto& [label, points] : trajectories) {
        auto arr = nlohmann::json::array();
        for (const auto& pt : points)
            arr.push_back(nlohmann::json::array({number_or_null(pt[0]), number_or_null(pt[1])}));
        paths[label] = std::move(arr);
    }
    j["trajectories"] = std::move(paths);
    const auto parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent);
    write_file_atomic(path, j.dump() + "\n");
}

bool load_landscape(const std::string& path, const std::string& key, LandscapeGrid& grid,
                    PlaneTrajectories& trajectories, std::string* direction_kind) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return false;
    // Regular file, bounded size and nesting (a cache is a few hundred kilobytes).
    const nlohmann::json j = read_json_file(path);
    LandscapeGrid g;
    PlaneTrajectories t;
    std::string kind;
    try {
        if (!j.is_object() || j.value("format", std::string()) != kFormat)
            throw DataError(path, 0,
                            "not a landscape file (format is not '" + std::string(kFormat) + "')");
        if (j.at("version").get<int>() != kVersion)
            throw DataError(path, 0,
                            "unsupported landscape file version " + j.at("version").dump());
        if (j.at("key").get<std::string>() != key) return false;
        kind = j.at("direction_kind").get<std::string>();
        g.n_alpha = j.at("n_alpha").get<int>();
        g.n_beta = j.at("n_beta").get<int>();
        const auto& r = j.at("range");
        g.range = {r.at("alpha_min").get<double>(), r.at("alpha_max").get<double>(),
                   r.at("beta_min").get<double>(), r.at("beta_max").get<double>()};
        const auto& losses = j.at("loss");
        if (g.n_alpha < 2 || g.n_beta < 2 || !losses.is_array() ||
            losses.size() != static_cast<size_t>(g.n_alpha) * static_cast<size_t>(g.n_beta))
            throw DataError(path, 0, "loss array does not match n_alpha × n_beta");
        g.loss.reserve(losses.size());
        for (const auto& v : losses) g.loss.push_back(number_from(v));
        for (const auto& [label, points] : j.at("trajectories").items()) {
            auto& out = t[label];
            for (const auto& pt : points) {
                if (!pt.is_array() || pt.size() != 2)
                    throw DataError(path, 0,
                                    "trajectory '" + label + "' has a point that is not [α, β]");
                out.push_back({number_from(pt[0]), number_from(pt[1])});
            }
        }
    } catch (const nlohmann::json::exception& e) {
        throw DataError(path, 0, std::string("malformed landscape file: ") + e.what());
    }
    grid = std::move(g);
    trajectories = std::move(t);
    if (direction_kind) *direction_kind = std::move(kind);
    return true;
}

}  // namespace liftlab
