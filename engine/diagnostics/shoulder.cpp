#include "diagnostics/shoulder.h"

#include <cstdint>
#include <cstring>

#include "core/errors.h"
#include "run/state_archive.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace liftlab {

torch::Tensor shoulder_mask(const torch::Tensor& pre_readout, bool projected) {
    torch::NoGradGuard no_grad;
    const auto x = pre_readout.detach().reshape({-1}).to(torch::kFloat64);
    if (projected) return x == 0.0;
    // sigmoid(t) ≤ s ⇔ t ≤ log(s/(1 − s)) (sigmoid is increasing).
    const double logit = std::log(kShoulderSigmoid / (1.0 - kShoulderSigmoid));
    return x <= logit;
}

ShoulderTracker::ShoulderTracker(int64_t coordinates) {
    if (coordinates < 1)
        throw std::invalid_argument("ShoulderTracker: coordinates must be >= 1, got " +
                                    std::to_string(coordinates));
    const auto n = static_cast<size_t>(coordinates);
    in_.assign(n, 0);
    left_cens_.assign(n, 0);
    entry_step_.assign(n, 0);
}

void ShoulderTracker::observe(int step, const torch::Tensor& in_shoulder) {
    if (in_shoulder.scalar_type() != torch::kBool)
        throw std::invalid_argument("ShoulderTracker::observe: in_shoulder must be a bool tensor");
    if (in_shoulder.numel() != coordinates())
        throw std::invalid_argument("ShoulderTracker::observe: in_shoulder has " +
                                    std::to_string(in_shoulder.numel()) + " entries, expected " +
                                    std::to_string(coordinates()));
    if (observations_ > 0 && step <= last_step_)
        throw std::invalid_argument("ShoulderTracker::observe: step " + std::to_string(step) +
                                    " is not after the previous step " +
                                    std::to_string(last_step_));
    const auto mask = in_shoulder.detach().to(torch::kCPU).contiguous();
    const bool* now = mask.data_ptr<bool>();
    const size_t n = in_.size();

    if (observations_ == 0) {
        for (size_t i = 0; i < n; ++i) {
            const uint8_t v = now[i] ? 1 : 0;
            in_[i] = v;
            left_cens_[i] = v;
            entry_step_[i] = step;
            in_count_ += v;
        }
        censored_start_ = in_count_;
    } else {
        exposure_ += in_count_ * static_cast<int64_t>(step - last_step_);
        int64_t count = 0;
        for (size_t i = 0; i < n; ++i) {
            const uint8_t v = now[i] ? 1 : 0;
            count += v;
            if (v == in_[i]) continue;
            in_[i] = v;
            if (v) {  // entry
                ++entries_;
                entry_step_[i] = step;
            } else {  // exit
                ++exits_;
                if (!left_cens_[i]) dwells_.push_back(static_cast<int64_t>(step) - entry_step_[i]);
                left_cens_[i] = 0;
            }
        }
        in_count_ = count;
    }
    last_step_ = step;
    ++observations_;
}

double ShoulderTracker::occupancy() const {
    if (observations_ == 0) return std::numeric_limits<double>::quiet_NaN();
    return static_cast<double>(in_count_) / static_cast<double>(in_.size());
}

double ShoulderTracker::median_dwell() const {
    if (dwells_.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::vector<int64_t> d = dwells_;
    const size_t mid = d.size() / 2;
    std::nth_element(d.begin(), d.begin() + mid, d.end());
    const double upper = static_cast<double>(d[mid]);
    if (d.size() % 2 == 1) return upper;
    const double lower = static_cast<double>(*std::max_element(d.begin(), d.begin() + mid));
    return 0.5 * (lower + upper);
}

double ShoulderTracker::exit_rate() const {
    if (exposure_ == 0) return std::numeric_limits<double>::quiet_NaN();
    return static_cast<double>(exits_) / static_cast<double>(exposure_);
}

namespace {
template <typename T>
torch::Tensor as_tensor(const std::vector<T>& v, torch::ScalarType type) {
    return torch::from_blob(const_cast<T*>(v.data()), {static_cast<int64_t>(v.size())}, type)
        .clone();
}
template <typename T>
void from_tensor(const torch::Tensor& t, std::vector<T>& v, size_t expected,
                 const std::string& key) {
    if (t.dim() != 1 || (expected != SIZE_MAX && static_cast<size_t>(t.numel()) != expected) ||
        t.element_size() != static_cast<int64_t>(sizeof(T)))
        throw DataError("state", 0, "shoulder tracker: '" + key + "' does not fit this run");
    v.resize(static_cast<size_t>(t.numel()));
    if (!v.empty()) std::memcpy(v.data(), t.data_ptr(), sizeof(T) * v.size());
}
}  // namespace

void ShoulderTracker::save_state(StateArchive& a, const std::string& prefix) const {
    a.put(prefix + "in", as_tensor(in_, torch::kUInt8));
    a.put(prefix + "left_cens", as_tensor(left_cens_, torch::kUInt8));
    std::vector<int64_t> entry(entry_step_.begin(), entry_step_.end());
    a.put(prefix + "entry_step", as_tensor(entry, torch::kLong));
    a.put(prefix + "dwells", as_tensor(dwells_, torch::kLong));
    a.put(prefix + "counts", torch::tensor({entries_, exits_, censored_start_, in_count_, exposure_,
                                            observations_, static_cast<int64_t>(last_step_)},
                                           torch::kLong));
}

void ShoulderTracker::load_state(const StateArchive& a, const std::string& prefix) {
    const size_t n = in_.size();
    from_tensor(a.tensor(prefix + "in"), in_, n, "in");
    from_tensor(a.tensor(prefix + "left_cens"), left_cens_, n, "left_cens");
    std::vector<int64_t> entry;
    from_tensor(a.tensor(prefix + "entry_step"), entry, n, "entry_step");
    entry_step_.assign(entry.begin(), entry.end());
    from_tensor(a.tensor(prefix + "dwells"), dwells_, SIZE_MAX, "dwells");
    std::vector<int64_t> c;
    from_tensor(a.tensor(prefix + "counts"), c, 7, "counts");
    entries_ = c[0];
    exits_ = c[1];
    censored_start_ = c[2];
    in_count_ = c[3];
    exposure_ = c[4];
    observations_ = c[5];
    last_step_ = static_cast<int>(c[6]);
}

}  // namespace liftlab
