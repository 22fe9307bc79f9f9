#include "training/method_trainer.h"

#include <stdexcept>

#include "core/activity.h"
#include "core/stopwatch.h"
#include "distributed/communicator.h"
#include "distributed/statistics_all_reduce.h"
#include "export/model_export.h"
#include "lastlayer/proximal_solve.h"
#include "run/state_archive.h"
#include "training/optimizer_factory.h"

namespace liftlab {

namespace {

constexpr int64_t kEvalChunk = 1024;  // samples per chunk when a whole split goes through a model
// A linear probe keeps its fixed features of both splits when they take at most this much.
constexpr double kMaxFixedFeatureBytes = 1024.0 * 1024.0 * 1024.0;

// Rank r of N takes the contiguous rows [⌊rn/N⌋, ⌊(r+1)n/N⌋) of n: every row exactly once.
std::pair<int64_t, int64_t> rank_share(int64_t n, const Communicator& comm) {
    return {n * comm.rank() / comm.world_size(), n * (comm.rank() + 1) / comm.world_size()};
}

// One flat buffer for many tensors, so that a step costs one collective.
torch::Tensor pack_flat(const std::vector<torch::Tensor>& parts) {
    std::vector<torch::Tensor> flat;
    for (const auto& p : parts) flat.push_back(p.detach().flatten());
    return torch::cat(flat).contiguous();
}

void unpack_flat(const torch::Tensor& buffer, const std::vector<torch::Tensor>& parts) {
    int64_t offset = 0;
    for (const auto& p : parts) {
        p.detach().copy_(buffer.narrow(0, offset, p.numel()).view(p.sizes()));
        offset += p.numel();
    }
}

// Evaluation mode for the guard's lifetime (a user's TorchScript backbone may have dropout or
// batch norm), then back to `training` (false for a fully frozen backbone, which never leaves
// evaluation mode).
class EvaluationMode {
public:
    EvaluationMode(FeatureBackbone& backbone, bool training)
        : backbone_(backbone), training_(training) {
        backbone_.set_training(false);
    }
    ~EvaluationMode() { backbone_.set_training(training_); }
    EvaluationMode(const EvaluationMode&) = delete;
    EvaluationMode& operator=(const EvaluationMode&) = delete;

private:
    FeatureBackbone& backbone_;
    bool training_;
};

}  // namespace

torch::Tensor flatten_rows(const torch::Tensor& t) {
    return t.reshape({-1, t.size(-1)});
}

MethodTrainer::MethodTrainer(const ExperimentSpec& spec, const MethodSpec& method,
                             const Dataset& data, std::uint64_t seed)
    : data_(data),
      device_(data.x_train.device()),
      cross_entropy_(method_info(method.name).cross_entropy),
      backbone_first_(spec.step_order == "backbone-first"),
      sampler_(data.n_train(), spec.batch_size, seed) {
    // Same seed, same backbone initialisation for every method of a run.
    torch::manual_seed(seed);
    // Built on the CPU (the same initialisation on every device), then moved to the data's.
    backbone_ = make_backbone(spec.backbone, data);
    head_ = make_head(method, backbone_->feature_dim(), data.output_dim());
    backbone_->to(device_);
    head_->to(device_);
    // Frozen parameters (backbone.freeze, or the file's requires_grad=False) are not the
    // optimizer's. With none left the backbone is a fixed feature map, in evaluation mode
    // throughout (batch norm on its running statistics, dropout off): a linear probe.
    linear_probe_ = backbone_->fully_frozen();
    if (linear_probe_) backbone_->set_training(false);
    auto params = backbone_->trainable_parameters();
    for (auto& p : head_->parameters()) params.push_back(p);
    const std::string& own = method_info(method.name).optimizer;
    optimizer_kind_ = own.empty() ? spec.optimizer.kind : own;
    if (!own.empty()) {
        // sgd, adam: the method's own optimizer and step size, for θ and W.
        optimizer_ = make_optimizer(own, method.lr, spec.optimizer.momentum, params);
    } else {
        // ce and cf-*: the spec's backbone optimizer (ce also trains its head with it).
        const double lr = method.lr > 0 ? method.lr : spec.optimizer.lr;
        optimizer_ = make_optimizer(spec.optimizer.kind, lr, spec.optimizer.momentum, params);
    }
}

torch::Tensor MethodTrainer::loss_of(const torch::Tensor& features, const torch::Tensor& targets,
                                     const torch::Tensor& labels) const {
    const auto pred = head_->predict(flatten_rows(features));
    if (cross_entropy_) return torch::cross_entropy_loss(pred, labels);
    return torch::mse_loss(pred, flatten_rows(targets));
}

bool MethodTrainer::attach_communicator(std::shared_ptr<Communicator> comm) {
    comm_ = std::move(comm);
    if (!comm_) return true;
    // Same seed gives the same initialisation everywhere; the broadcast makes it a guarantee.
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> params;
    for (auto& group : optimizer_->param_groups())
        for (auto& p : group.params()) params.push_back(p);
    if (params.empty()) return true;
    auto buffer = pack_flat(params);
    comm_->broadcast(buffer, /*root=*/0, "initial parameters");
    unpack_flat(buffer, params);
    return true;
}

double MethodTrainer::all_reduce_gradients(double loss) {
    // Each rank's loss was weighted by its share of the global batch, so the summed gradient is
    // the gradient of the global-batch mean loss. The loss value rides in the same buffer.
    std::vector<torch::Tensor> grads;
    for (auto& group : optimizer_->param_groups())
        for (auto& p : group.params()) {
            if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
            grads.push_back(p.grad());
        }
    const auto dtype = grads.empty() ? torch::kFloat64 : grads.front().scalar_type();
    grads.push_back(torch::full({1}, loss, torch::TensorOptions().dtype(dtype)));
    auto buffer = pack_flat(grads);
    comm_->all_reduce_sum(buffer, "gradients");
    unpack_flat(buffer, grads);
    return grads.back().item<double>();
}

void MethodTrainer::observe(const torch::Tensor& features, const torch::Tensor& yb) {
    const auto t0 = Clock::now();
    if (comm_) {
        // Exact distributed closed form: the statistics of the union batch, then the same solve.
        GramStatistics stats;
        stats.add(with_bias_column(flatten_rows(features.detach())), flatten_rows(yb));
        all_reduce_statistics(stats, *comm_);
        head_->observe_statistics(stats);
    } else {
        head_->observe_batch(flatten_rows(features.detach()), flatten_rows(yb));
    }
    solve_seconds_ += seconds_since(t0);
}

void MethodTrainer::refresh_full_data() {
    // W*(θ) over the whole training set: accumulate ΦᵀΦ and ΦᵀY chunk by chunk.
    const auto t0 = Clock::now();
    torch::NoGradGuard no_grad;
    GramStatistics stats;
    // Data-parallel: each rank accumulates its slice of the training set, then one all-reduce.
    const auto [begin, end] = comm_ ? rank_share(data_.n_train(), *comm_)
                                    : std::pair<int64_t, int64_t>{0, data_.n_train()};
    for (int64_t start = begin; start < end; start += kEvalChunk) {
        throw_if_stopped();
        const int64_t len = std::min(kEvalChunk, end - start);
        const auto f = flatten_rows(chunk_features(data_.x_train, start, len));
        stats.add(with_bias_column(f), flatten_rows(data_.y_train.narrow(0, start, len)));
    }
    if (comm_) {
        if (!stats.gram.defined()) {  // fewer training samples than ranks: an empty share
            const int64_t p = backbone_->feature_dim() + 1, k = data_.output_dim();
            const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device_);
            stats.gram = torch::zeros({p, p}, f64);
            stats.cross = torch::zeros({p, k}, f64);
        }
        all_reduce_statistics(stats, *comm_);
    }
    head_->solve_full(stats);
    solve_seconds_ += seconds_since(t0);
}

double MethodTrainer::theta_step(const torch::Tensor& xb, const torch::Tensor& yb,
                                 const torch::Tensor& lb, double share) {
    optimizer_->zero_grad();
    auto loss = loss_of(backbone_->features(xb), yb, lb);
    return backward_and_step(loss, share);
}

double MethodTrainer::backward_and_step(const torch::Tensor& loss, double share) {
    double value;
    if (comm_) {
        (loss * share).backward();
        value = all_reduce_gradients(loss.item<double>() * share);
    } else {
        loss.backward();
        value = loss.item<double>();
    }
    optimizer_->step();
    return value;
}

std::shared_ptr<const FixedFeatures> MethodTrainer::compute_fixed_features(
    const std::atomic<bool>* stop) {
    if (!linear_probe_) return nullptr;
    // Feature rows per sample: 1, or the grid's s points (the targets are n × s × k).
    const double rows_per_sample =
        static_cast<double>(data_.y_train[0].numel()) / static_cast<double>(data_.output_dim());
    const double bytes = static_cast<double>(data_.n_train() + data_.n_test()) * rows_per_sample *
                         static_cast<double>(backbone_->feature_dim()) * 4.0;
    if (bytes > kMaxFixedFeatureBytes) return nullptr;
    torch::NoGradGuard no_grad;
    auto split = [&](const torch::Tensor& x) {
        std::vector<torch::Tensor> parts;
        for (int64_t start = 0; start < x.size(0); start += kEvalChunk) {
            if (stop && stop->load()) return torch::Tensor();
            parts.push_back(
                backbone_->features(x.narrow(0, start, std::min(kEvalChunk, x.size(0) - start))));
        }
        return torch::cat(parts, 0);
    };
    auto out = std::make_shared<FixedFeatures>();
    out->train = split(data_.x_train);
    if (!out->train.defined()) return nullptr;
    out->test = split(data_.x_test);
    if (!out->test.defined()) return nullptr;
    return out;
}

torch::Tensor MethodTrainer::chunk_features(const torch::Tensor& x, int64_t start, int64_t len) {
    if (fixed_ && x.is_same(data_.x_train)) return fixed_->train.narrow(0, start, len);
    if (fixed_ && x.is_same(data_.x_test)) return fixed_->test.narrow(0, start, len);
    return backbone_->features(x.narrow(0, start, len));
}

double MethodTrainer::probe_step(const torch::Tensor& idx, const torch::Tensor& xb,
                                 const torch::Tensor& yb, const torch::Tensor& lb, double share) {
    // Fixed features: the unit's shared ones, or one forward pass without a graph; nothing flows
    // back into the backbone.
    torch::Tensor features;
    {
        torch::NoGradGuard no_grad;
        features = fixed_ ? fixed_->train.index_select(0, idx) : backbone_->features(xb);
    }
    if (!head_->closed_form()) {
        // sgd, adam, ce: the head alone, by the method's optimizer.
        optimizer_->zero_grad();
        return backward_and_step(loss_of(features, yb, lb), share);
    }
    torch::NoGradGuard no_grad;
    auto batch_loss = [&] {
        const double value = loss_of(features, yb, lb).item<double>();
        // Data-parallel: the global batch's mean loss (no gradients to reduce beside it).
        return comm_ ? all_reduce_gradients(value * share) : value;
    };
    if (head_->wants_full_data(1)) {
        // cf-full: W* of fixed features does not move, so the first step's one solve is the
        // ridge optimum for good (refresh_every has nothing to refresh; a resumed run keeps W).
        if (steps_ == 1) refresh_full_data();
        return batch_loss();
    }
    if (backbone_first_) {
        // The same bookkeeping as with a trained backbone: the batch loss at W_{t−1}, then W_t.
        const double loss = batch_loss();
        observe(features, yb);
        return loss;
    }
    observe(features, yb);
    return batch_loss();
}

double MethodTrainer::step() {
    const auto t0 = Clock::now();
    ++steps_;
    auto idx = sampler_.next().to(device_);
    // Data-parallel: the global batch from the same sampler on every rank, then this rank's rows;
    // `share` weights the local mean loss so that the summed gradients are the global mean's.
    double share = 1.0;
    if (comm_) {
        const int64_t global = idx.size(0);
        const auto [begin, end] = rank_share(global, *comm_);
        idx = idx.narrow(0, begin, end - begin);
        share = static_cast<double>(end - begin) / static_cast<double>(global);
    }
    const auto xb = data_.x_train.index_select(0, idx);
    const auto yb = data_.y_train.index_select(0, idx);
    const auto lb =
        data_.classification() ? data_.labels_train.index_select(0, idx) : torch::Tensor();
    double loss;
    if (linear_probe_) {
        loss = probe_step(idx, xb, yb, lb, share);
    } else if (!head_->closed_form()) {
        loss = theta_step(xb, yb, lb, share);
    } else if (head_->wants_full_data(steps_)) {
        // cf-full: W*(θ) before the θ step, so the envelope gradient is exact (deterministic CF).
        refresh_full_data();
        loss = theta_step(xb, yb, lb, share);
    } else if (backbone_first_) {
        // Envelope theorem: ∇θ L*(θ) = ∇θ L(W, θ) at W = W*(θ): the θ step back-propagates the
        // ordinary loss with W fixed, never through the solve. θ_t from W_{t−1} …
        loss = theta_step(xb, yb, lb, share);
        torch::NoGradGuard no_grad;
        observe(backbone_->features(xb), yb);  // … then W_t on φ_{θ_t}(X_B).
    } else {
        // w-first: W_t on φ_{θ_{t−1}}(X_B), then the θ step at W_t (one forward pass).
        optimizer_->zero_grad();
        auto features = backbone_->features(xb);
        observe(features, yb);
        loss = backward_and_step(loss_of(features, yb, lb), share);
    }
    step_seconds_ += seconds_since(t0);
    return loss;
}

torch::Tensor MethodTrainer::flat_features(const torch::Tensor& x) {
    torch::NoGradGuard no_grad;
    EvaluationMode eval(*backbone_, !linear_probe_);
    std::vector<torch::Tensor> parts;
    for (int64_t start = 0; start < x.size(0); start += kEvalChunk) {
        throw_if_stopped();
        const int64_t len = std::min(kEvalChunk, x.size(0) - start);
        parts.push_back(flatten_rows(backbone_->features(x.narrow(0, start, len))));
    }
    return torch::cat(parts, 0);
}

std::map<std::string, double> MethodTrainer::evaluate(const torch::Tensor& x,
                                                      const torch::Tensor& y,
                                                      const torch::Tensor& labels) {
    torch::NoGradGuard no_grad;
    EvaluationMode eval(*backbone_, !linear_probe_);
    double sq_sum = 0, ce_sum = 0, rel_sum = 0;
    int64_t correct = 0;
    for (int64_t start = 0; start < x.size(0); start += kEvalChunk) {
        throw_if_stopped();
        const int64_t len = std::min(kEvalChunk, x.size(0) - start);
        const auto yc = y.narrow(0, start, len);
        const auto pred =
            head_->predict(flatten_rows(chunk_features(x, start, len))).reshape(yc.sizes());
        sq_sum += (pred - yc).pow(2).sum().item<double>();
        if (data_.classification()) {
            const auto lc = labels.narrow(0, start, len);
            correct += (pred.argmax(1) == lc).sum().item<int64_t>();
            if (cross_entropy_)
                ce_sum +=
                    torch::cross_entropy_loss(pred, lc, {}, at::Reduction::Sum).item<double>();
        } else if (y.dim() > 2) {
            // Operator learning: relative L2 error of each output function.
            const auto err = (pred - yc).flatten(1).norm(2, 1);
            rel_sum += (err / yc.flatten(1).norm(2, 1).clamp_min(1e-12)).sum().item<double>();
        }
    }
    std::map<std::string, double> m;
    const double n = static_cast<double>(x.size(0));
    m["test_loss"] = cross_entropy_ ? ce_sum / n : sq_sum / static_cast<double>(y.numel());
    if (data_.classification()) m["test_accuracy"] = correct / n;
    if (y.dim() > 2) m["test_rel_l2"] = rel_sum / n;
    return m;
}

std::string MethodTrainer::resume_blocker() const {
    if (comm_) return "data-parallel runs are not resumed";
    if (dynamic_cast<torch::optim::Adam*>(optimizer_.get()))
        return "LibTorch's Adam (off the CPU) has no saved state here";
    return "";
}

std::vector<torch::Tensor> MethodTrainer::all_parameters() {
    auto params = backbone_->parameters();
    for (auto& p : head_->parameters()) params.push_back(p);
    return params;
}

void MethodTrainer::save_state(StateArchive& a, const std::string& prefix) {
    a.put_tensors(prefix + "params", all_parameters());
    head_->save_state(a, prefix + "head.");
    save_optimizer_state(*optimizer_, a, prefix + "opt.");
    sampler_.save_state(a, prefix + "sampler.");
    a.put_int(prefix + "steps", steps_);
    a.put_real(prefix + "step_seconds", step_seconds_);
    a.put_real(prefix + "solve_seconds", solve_seconds_);
}

void MethodTrainer::load_state(const StateArchive& a, const std::string& prefix) {
    a.copy_into(prefix + "params", all_parameters());
    head_->load_state(a, prefix + "head.");
    load_optimizer_state(*optimizer_, a, prefix + "opt.");
    sampler_.load_state(a, prefix + "sampler.");
    steps_ = static_cast<int>(a.integer(prefix + "steps"));
    step_seconds_ = a.real(prefix + "step_seconds");
    solve_seconds_ = a.real(prefix + "solve_seconds");
}

void MethodTrainer::start_from_method(Trainer& source) {
    auto* src = dynamic_cast<MethodTrainer*>(&source);
    if (!src)
        throw std::invalid_argument(
            "a gradient or closed-form method starts only from another of that family");
    const auto from = src->backbone_->parameters(), to = backbone_->parameters();
    if (from.size() != to.size())
        throw std::invalid_argument("the backbones differ (" + std::to_string(from.size()) +
                                    " and " + std::to_string(to.size()) + " tensors)");
    {
        torch::NoGradGuard no_grad;
        for (size_t i = 0; i < to.size(); ++i) {
            if (from[i].sizes() != to[i].sizes())
                throw std::invalid_argument("the backbones differ in tensor " + std::to_string(i));
            to[i].copy_(from[i]);
        }
    }
    // W means the same between two heads of one loss (features·W[:d] + W[d]: the prediction, or
    // the logits); a squared-loss W is no cross-entropy head's, which keeps its own start.
    if (src->cross_entropy_ == cross_entropy_) head_->load_weights(src->head_->weights());
    StateArchive carried;
    src->sampler_.save_state(carried, "sampler.");
    sampler_.load_state(carried, "sampler.");
    if (src->optimizer_kind_ == optimizer_kind_ &&
        src->head_->closed_form() == head_->closed_form()) {
        // The same parameters (the backbone's, and the head's when both are trained) under the
        // same update rule: the moments mean the same thing. The step size is the child's own
        // (the seed run replays its settings after the start).
        save_optimizer_state(*src->optimizer_, carried, "opt.");
        load_optimizer_state(*optimizer_, carried, "opt.");
    }
    steps_ = src->steps_;
    step_seconds_ = src->step_seconds_;
    solve_seconds_ = src->solve_seconds_;
}

std::map<std::string, double> MethodTrainer::live_settings() const {
    auto out = head_->settings();
    out["lr"] = optimizer_->param_groups().front().options().get_lr();
    return out;
}

void MethodTrainer::set_live_setting(const std::string& key, double value) {
    if (key != "lr") return head_->set_setting(key, value);
    if (!(value > 0)) throw std::invalid_argument("lr must be positive");
    for (auto& group : optimizer_->param_groups()) group.options().set_lr(value);
}

bool MethodTrainer::export_model(const std::string& path) {
    auto module = backbone_head_module(*backbone_, head_->weights());
    if (!module) return false;
    save_module(*module, path);
    return true;
}

bool MethodTrainer::parameters_finite() {
    for (const auto& p : backbone_->parameters())
        if (!torch::isfinite(p).all().item<bool>()) return false;
    if (head_->closed_form()) return torch::isfinite(head_->weights()).all().item<bool>();
    for (const auto& p : head_->parameters())
        if (!torch::isfinite(p).all().item<bool>()) return false;
    return true;
}

}  // namespace liftlab
