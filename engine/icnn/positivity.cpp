#include "icnn/positivity.h"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace liftlab {

namespace {
constexpr int64_t kBodyHidden = 64;       // per-sample MLP width (METHODS.md, body h_φ)
constexpr int64_t kBodyFeatures = 96;     // pooled feature vector h_φ(X)
constexpr double kInitPreReadout = -2.0;  // θ̃ init → θ = softplus(−2) ≈ 0.127
constexpr double kReadoutInitStd = 0.01;  // Θ_E starts small so θ̃ ≈ b at init
constexpr double kStandardiseEps = 1e-5;  // keeps the standardisation finite for a flat h
constexpr double kPi = 3.14159265358979323846;

int64_t numel_of(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
}
}  // namespace

PositivityStrategy::PositivityStrategy(std::vector<std::vector<int64_t>> shapes)
    : shapes_(std::move(shapes)) {
    for (const auto& shape : shapes_)
        if (shape.empty() || numel_of(shape) <= 0)
            throw std::invalid_argument("positivity: every constrained shape must be non-empty");
}

std::vector<torch::Tensor> PositivityStrategy::readout(
    const std::vector<torch::Tensor>& pre) const {
    std::vector<torch::Tensor> out;
    for (const auto& t : pre) out.push_back(torch::softplus(t));
    return out;
}

// ---- pgd -------------------------------------------------------------------------------------

PgdPositivity::PgdPositivity(std::vector<std::vector<int64_t>> shapes)
    : PositivityStrategy(std::move(shapes)) {
    for (size_t i = 0; i < shapes_.size(); ++i) {
        const double n_in = static_cast<double>(shapes_[i].back());
        const double std = std::sqrt(kPi / (2.0 * n_in));  // |N(0, π/(2 n_in))|
        theta_.push_back(register_parameter("theta_" + std::to_string(i),
                                            (torch::randn(shapes_[i]) * std).abs()));
    }
}

std::vector<torch::Tensor> PgdPositivity::weights(const torch::Tensor& /*batch*/) {
    return theta_;
}

std::vector<torch::Tensor> PgdPositivity::pre_readout(const torch::Tensor& /*batch*/) {
    return theta_;
}

void PgdPositivity::after_step() {
    torch::NoGradGuard no_grad;
    for (auto& t : theta_) t.clamp_min_(0.0);
}

// ---- softplus --------------------------------------------------------------------------------

SoftplusPositivity::SoftplusPositivity(std::vector<std::vector<int64_t>> shapes)
    : PositivityStrategy(std::move(shapes)) {
    for (size_t i = 0; i < shapes_.size(); ++i)
        theta_tilde_.push_back(register_parameter("theta_tilde_" + std::to_string(i),
                                                  torch::full(shapes_[i], kInitPreReadout)));
}

std::vector<torch::Tensor> SoftplusPositivity::weights(const torch::Tensor& /*batch*/) {
    std::vector<torch::Tensor> out;
    for (const auto& t : theta_tilde_) out.push_back(torch::softplus(t));
    return out;
}

std::vector<torch::Tensor> SoftplusPositivity::pre_readout(const torch::Tensor& /*batch*/) {
    return theta_tilde_;
}

// ---- lifter ----------------------------------------------------------------------------------

LifterPositivity::LifterPositivity(std::vector<std::vector<int64_t>> shapes,
                                   const LifterPositivityOptions& options)
    : PositivityStrategy(std::move(shapes)), options_(options) {
    if (options_.body()) {
        body_ =
            torch::nn::Sequential(torch::nn::Linear(options_.input_dim(), kBodyHidden),
                                  torch::nn::ReLU(), torch::nn::Linear(kBodyHidden, kBodyHidden),
                                  torch::nn::ReLU(), torch::nn::Linear(kBodyHidden, kBodyFeatures));
        register_module("body", body_);
    } else {
        constant_h_ = register_parameter("constant_h", torch::randn({kBodyFeatures}));
    }
    for (size_t i = 0; i < shapes_.size(); ++i) {
        torch::nn::Linear readout(
            torch::nn::LinearOptions(kBodyFeatures, numel_of(shapes_[i])).bias(options_.slack()));
        {
            torch::NoGradGuard no_grad;
            readout->weight.normal_(/*mean=*/0.0, kReadoutInitStd);
            if (options_.slack()) readout->bias.fill_(kInitPreReadout);
        }
        readouts_.push_back(register_module("readout_" + std::to_string(i), readout));
    }
}

void LifterPositivity::set_independent_batch(const torch::Tensor& independent_batch) {
    independent_batch_ = independent_batch.detach();
}

torch::Tensor LifterPositivity::body_features(const torch::Tensor& batch) {
    torch::Tensor h;
    if (!options_.body()) {
        h = constant_h_;
    } else {
        torch::Tensor x = batch;
        if (options_.decoupled()) {
            if (!independent_batch_.defined())
                throw std::logic_error(
                    "lifter-decoupled: call set_independent_batch(X′) before weights()");
            x = independent_batch_;
        }
        if (x.dim() != 2 || x.size(1) != options_.input_dim())
            throw std::invalid_argument("lifter: conditioning batch must be n × " +
                                        std::to_string(options_.input_dim()));
        h = body_->forward(x.detach()).mean(/*dim=*/0);  // DeepSets: mean-pool over samples
    }
    const auto mean = h.mean();
    const auto var = h.var(/*unbiased=*/false);
    return (h - mean) / torch::sqrt(var + kStandardiseEps);
}

std::vector<torch::Tensor> LifterPositivity::pre_readout(const torch::Tensor& batch) {
    const auto h = body_features(batch);
    std::vector<torch::Tensor> out;
    for (size_t i = 0; i < readouts_.size(); ++i)
        out.push_back(readouts_[i]->forward(h).view(shapes_[i]));
    return out;
}

std::vector<torch::Tensor> LifterPositivity::weights(const torch::Tensor& batch) {
    auto out = pre_readout(batch);
    for (auto& t : out) t = torch::softplus(t);
    return out;
}

// ---- factory ---------------------------------------------------------------------------------

const std::vector<std::string>& positivity_strategy_names() {
    static const std::vector<std::string> names = {
        "pgd",           "softplus",        "softplus-wide", "lifter", "lifter-noslack",
        "lifter-nobody", "lifter-decoupled"};
    return names;
}

std::shared_ptr<PositivityStrategy> make_positivity(const std::string& name,
                                                    std::vector<std::vector<int64_t>> shapes,
                                                    int64_t input_dim) {
    if (name == "pgd") return std::make_shared<PgdPositivity>(std::move(shapes));
    // softplus-wide is the same parameterisation; only the ICNN around it is wider.
    if (name == "softplus" || name == "softplus-wide")
        return std::make_shared<SoftplusPositivity>(std::move(shapes));
    LifterPositivityOptions options(input_dim);
    if (name == "lifter") return std::make_shared<LifterPositivity>(std::move(shapes), options);
    if (name == "lifter-noslack")
        return std::make_shared<LifterPositivity>(std::move(shapes), options.slack(false));
    if (name == "lifter-nobody")
        return std::make_shared<LifterPositivity>(std::move(shapes), options.body(false));
    if (name == "lifter-decoupled")
        return std::make_shared<LifterPositivity>(std::move(shapes), options.decoupled(true));
    std::string valid;
    for (const auto& n : positivity_strategy_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown positivity strategy '" + name + "' (valid: " + valid +
                                ")");
}

}  // namespace liftlab
