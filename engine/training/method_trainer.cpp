#include "training/method_trainer.h"

#include <chrono>

#include "lastlayer/proximal_solve.h"

namespace liftlab {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::string& kind, double lr,
                                                        double momentum,
                                                        std::vector<torch::Tensor> params) {
    if (kind == "sgd")
        return std::make_unique<torch::optim::SGD>(
            std::move(params), torch::optim::SGDOptions(lr).momentum(momentum));
    return std::make_unique<torch::optim::Adam>(std::move(params), torch::optim::AdamOptions(lr));
}

}  // namespace

MethodTrainer::MethodTrainer(const ExperimentSpec& spec, const MethodSpec& method,
                             const Dataset& data, std::uint64_t seed)
    : method_(method),
      data_(data),
      closed_form_(method.name.rfind("cf-", 0) == 0),
      backbone_first_(spec.step_order == "backbone-first"),
      sampler_(data.n_train(), spec.batch_size, seed) {
    // Same seed, same backbone initialisation for every method of a run.
    torch::manual_seed(seed);
    std::vector<int64_t> hidden(spec.backbone.hidden.begin(), spec.backbone.hidden.end());
    backbone_ = MlpBackbone(MlpBackboneOptions(data.input_dim(), spec.backbone.feature_dim)
                                .hidden(hidden)
                                .activation(spec.backbone.activation));
    const int64_t d = spec.backbone.feature_dim, k = data.output_dim();
    if (closed_form_) {
        // W_0 = 0: the first θ step sees zero predictions; W is then solved on the first batch.
        w_ = torch::zeros({d + 1, k}, torch::kFloat64);
        w_f32_ = w_.to(torch::kFloat32);
        const double lr = method.lr > 0 ? method.lr : spec.optimizer.lr;
        optimizer_ = make_optimizer(spec.optimizer.kind, lr, spec.optimizer.momentum,
                                    backbone_->parameters());
    } else {
        head_ = torch::nn::Linear(d, k);
        auto params = backbone_->parameters();
        for (auto& p : head_->parameters()) params.push_back(p);
        optimizer_ = make_optimizer(method.name, method.lr, spec.optimizer.momentum, params);
    }
}

torch::Tensor MethodTrainer::predict(const torch::Tensor& features) const {
    if (!closed_form_) return torch::nn::functional::linear(features, head_->weight, head_->bias);
    const int64_t d = features.size(1);
    return torch::addmm(w_f32_[d], features, w_f32_.narrow(0, 0, d));
}

torch::Tensor MethodTrainer::last_layer() const {
    if (closed_form_) return w_;
    torch::NoGradGuard no_grad;
    return torch::cat({head_->weight.t(), head_->bias.unsqueeze(0)}, 0).to(torch::kFloat64);
}

void MethodTrainer::solve_last_layer(const torch::Tensor& features, const torch::Tensor& yb) {
    const auto t0 = Clock::now();
    const auto phi = with_bias_column(features.detach().to(torch::kFloat64));
    if (method_.name == "cf-ridge") {
        w_ = solve_proximal(phi, yb, method_.beta).w;  // the batch alone
    } else {
        w_ = solve_proximal(phi, yb, method_.lambda, w_).w;  // pulled toward W_{t−1}
    }
    w_f32_ = w_.to(torch::kFloat32);
    solve_seconds_ += seconds_since(t0);
}

double MethodTrainer::gradient_step(const torch::Tensor& xb, const torch::Tensor& yb) {
    optimizer_->zero_grad();
    auto loss = torch::mse_loss(predict(backbone_->forward(xb)), yb);
    loss.backward();
    optimizer_->step();
    return loss.item<double>();
}

double MethodTrainer::closed_form_step(const torch::Tensor& xb, const torch::Tensor& yb) {
    // Envelope theorem: ∇θ L*(θ) = ∇θ L(W, θ) at W = W*(θ), so the θ step back-propagates the
    // ordinary loss with W held fixed and never through the solve.
    if (backbone_first_) {
        const double loss = gradient_step(xb, yb);  // θ_t from W_{t−1}
        torch::NoGradGuard no_grad;
        solve_last_layer(backbone_->forward(xb), yb);  // W_t on φ_{θ_t}(X_B)
        return loss;
    }
    optimizer_->zero_grad();
    auto features = backbone_->forward(xb);
    solve_last_layer(features, yb);  // W_t on φ_{θ_{t−1}}(X_B)
    auto loss = torch::mse_loss(predict(features), yb);
    loss.backward();
    optimizer_->step();
    return loss.item<double>();
}

double MethodTrainer::step() {
    const auto t0 = Clock::now();
    const auto idx = sampler_.next();
    const auto xb = data_.x_train.index_select(0, idx);
    const auto yb = data_.y_train.index_select(0, idx);
    const double loss = closed_form_ ? closed_form_step(xb, yb) : gradient_step(xb, yb);
    step_seconds_ += seconds_since(t0);
    return loss;
}

double MethodTrainer::evaluate(const torch::Tensor& x, const torch::Tensor& y) {
    torch::NoGradGuard no_grad;
    constexpr int64_t kChunk = 4096;  // bounds memory for large test sets
    double sum = 0;
    for (int64_t start = 0; start < x.size(0); start += kChunk) {
        const int64_t len = std::min(kChunk, x.size(0) - start);
        const auto pred = predict(backbone_->forward(x.narrow(0, start, len)));
        sum += (pred - y.narrow(0, start, len)).pow(2).sum().item<double>();
    }
    return sum / static_cast<double>(y.numel());
}

bool MethodTrainer::parameters_finite() {
    for (const auto& p : backbone_->parameters())
        if (!torch::isfinite(p).all().item<bool>()) return false;
    if (closed_form_) return torch::isfinite(w_).all().item<bool>();
    for (const auto& p : head_->parameters())
        if (!torch::isfinite(p).all().item<bool>()) return false;
    return true;
}

}  // namespace liftlab
