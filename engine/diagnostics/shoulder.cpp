#include "diagnostics/shoulder.h"

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

}  // namespace liftlab
