#include "training/runner.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <unistd.h>

#include "core/activity.h"
#include "core/bounded_input.h"
#include "core/c_numbers.h"
#include "core/compute_threads.h"
#include "core/device.h"
#include "core/error_text.h"
#include "core/errors.h"
#include "core/version.h"
#include "data/dataset.h"
#include "distributed/communicator.h"
#include "distributed/data_parallel_checks.h"
#include "export/model_export.h"
#include "icnn/script_icnn.h"
#include "lastlayer/last_layer.h"
#include "methods/method_registry.h"
#include "nn/backbone_freeze.h"
#include "nn/feature_backbone.h"
#include "nn/torchscript_backbone.h"
#include "run/folder_lock.h"
#include "run/run_store.h"
#include "training/live_events.h"
#include "training/model_probe.h"
#include "training/resume.h"
#include "training/run_reporter.h"
#include "training/seed_run.h"

namespace liftlab {

std::vector<std::string> final_metric_warnings(const std::map<std::string, double>& fin) {
    std::vector<std::string> out;
    // Below 1 % of the draws (docs/methods.md §5.2) the importance log Z rests on a handful of
    // weights: biased low and with an unreliable standard error, and so is test_loss.
    constexpr double kMinEssFraction = 0.01;
    if (const auto it = fin.find("ess_fraction"); it != fin.end() && it->second < kMinEssFraction) {
        out.push_back("importance-sampling ESS fraction " + c_general(it->second, 3) +
                      " < 1 %: log_z and test_loss are unreliable (try icnn.proposal=flow with "
                      "icnn.proposal_adapt_steps > 0)");
    }
    // The chord check of an ICNN (IcnnTrainer::add_chord_convexity): a violation at all means the
    // model is not convex, whatever its constrained weights say — its energy is no ICNN's, and
    // what rests on convexity (the lifter's picture, the landscapes' reading) does not hold.
    if (const auto it = fin.find("chord_convexity_violations"); it != fin.end() && it->second > 0) {
        const auto gap = fin.find("chord_convexity_gap");
        out.push_back(
            "not convex: the energy lies above its chord on " + c_general(100 * it->second, 3) +
            " % of the chords checked between test points" +
            (gap == fin.end()
                 ? std::string()
                 : " (largest gap " + c_general(gap->second, 3) + " of 1 + |E(a)| + |E(b)|)") +
            "; check the model's activations (convex, and non-decreasing after the first "
            "layer) and which weights are constrained non-negative");
    }
    return out;
}

namespace {

// This machine's memory (bytes; 8 GB when the system does not say).
double physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return 8e9;
    return static_cast<double>(pages) * static_cast<double>(page);
}

// The device the run trains on (spec.device resolved on this machine).
torch::Device run_device(const ExperimentSpec& spec) {
    // auto: the ICNN family runs on the CPU even where CUDA is available (parse_spec refuses an
    // explicit cuda for it).
    if (spec.device == "auto" && is_icnn_task(spec.task.kind)) return torch::Device(torch::kCPU);
    return resolve_device(spec.device);
}

// One run of a spec: its data, its folder and its (sweep value × seed) units, in that order.
// What outlives a throw — the folder and the runs so far — stays readable, so run_experiment can
// close the folder as `failed`.
class Run {
public:
    Run(const ExperimentSpec& spec, const RunOptions& options, const ProgressCallback& on_progress)
        : top_(spec), options_(options), on_progress_(on_progress) {}

    RunResult execute();
    // After a throw: the summary of a failed run, when a folder exists (false otherwise).
    bool close_as_failed(const std::string& reason);

private:
    bool prepare_data();
    void load_data(const ExperimentSpec& spec);
    void check_user_models(const ExperimentSpec& spec);
    void check_backbone(const ExperimentSpec& spec);
    void record_model_hashes();
    bool data_progress(double fraction);
    void create_folder();
    void write_test_data();
    void run_sub_spec(int vi, RunReporter& reporter);
    void run_units_in_parallel(int first, int last, int workers,
                               const std::function<void(int)>& run_unit);
    void finish(RunReporter& reporter);

    const ExperimentSpec& top_;
    const RunOptions& options_;
    const ProgressCallback& on_progress_;
    std::vector<std::pair<std::string, ExperimentSpec>> sub_specs_;
    // Events sent in while the run trains (RunOptions::live_events): recorded in spec.json.
    void begin_live_events();
    std::optional<RunStore> store_;  // set once the run folder exists
    std::optional<FolderLock> lock_;
    RunResult result_;
    std::optional<Dataset> data_;  // on device_
    torch::Device device_{torch::kCPU};
    nlohmann::json data_task_;  // the task the loaded data belongs to
    // SHA-256 of the users' TorchScript files as checked (backbone.script, icnn.script).
    std::map<std::string, std::string> model_hashes_;
    // What backbone.freeze (and the model file) left fixed: spec.json's "backbone_freeze".
    std::optional<nlohmann::json> freeze_record_;
    std::set<std::string> checked_models_;  // model + data pairs checked (check_user_models)
    // The feature width a user's TorchScript backbone gave on the probe rows (spec.json records
    // it in place of the preset's backbone.feature_dim, which such a backbone does not read).
    int64_t script_feature_dim_ = 0;
    int last_percent_ = -1;
    std::atomic<bool> cancelled_{false};
};

// Slow data preparation reports progress (phase "data") and honours the stop flag.
bool Run::data_progress(double fraction) {
    if (options_.stop && options_.stop->load()) return false;
    const int percent = static_cast<int>(fraction * 100);
    if (!on_progress_ || percent == last_percent_) return true;
    last_percent_ = percent;
    ProgressUpdate u;
    u.phase = "data";
    u.fraction = fraction;
    u.num_seeds = static_cast<int>(top_.seeds.size());
    u.total_steps = top_.steps;
    return on_progress_(u);
}

void Run::load_data(const ExperimentSpec& spec) {
    const Activity activity("preparing the data (" + spec.task.kind + ")");
    const auto task = to_json(spec)["task"];
    if (!data_ || task != data_task_) {
        last_percent_ = -1;
        data_ = to_device(make_dataset(spec.task, [this](double f) { return data_progress(f); }),
                          device_);
        data_task_ = task;
    }
    // A batch larger than the data would silently shrink to the data (the summary would still
    // claim the requested size).
    if (spec.batch_size > data_->n_train()) {
        const auto file = user_data_source(spec.task);
        throw SpecError("batch_size", std::to_string(spec.batch_size) + " is larger than the " +
                                          std::to_string(data_->n_train()) +
                                          " training samples of the data" +
                                          (file.empty() ? "" : " in " + file));
    }
    // Images too small for the cnn backbone's blocks (each halves the side; a 1 × 1 IDX or
    // CIFAR file) are a data/spec mismatch, named before training, not a failed run.
    const auto& x = data_->x_train;
    const auto blocks = static_cast<int64_t>(spec.backbone.channels.size());
    if (spec.backbone.kind == "cnn" && x.dim() == 4 && blocks > 0 &&
        (std::min(x.size(2), x.size(3)) >> blocks) < 1) {
        const std::string where = spec.task.data_dir.empty() ? "" : " in " + spec.task.data_dir;
        throw SpecError("backbone.channels",
                        std::to_string(blocks) + " cnn blocks need images of at least " +
                            std::to_string(int64_t{1} << blocks) + " × " +
                            std::to_string(int64_t{1} << blocks) + " pixels; the images" + where +
                            " are " + std::to_string(x.size(2)) + " × " +
                            std::to_string(x.size(3)));
    }
    check_user_models(spec);
    check_backbone(spec);
}

// The backbone of the backbone + last-layer methods, built once before a run folder exists:
// backbone.freeze resolved against its parameter names (a name it does not have is a spec error)
// and recorded for spec.json, and the closed forms that accumulate d × d statistics held to
// this machine's memory (200 000 features would ask for a 320 GB Gram matrix).
void Run::check_backbone(const ExperimentSpec& spec) {
    const bool uses_backbone =
        std::any_of(spec.methods.begin(), spec.methods.end(), [](const MethodSpec& m) {
            const auto family = method_info(m.name).family;
            return family == MethodFamily::Gradient || family == MethodFamily::ClosedForm;
        });
    if (!uses_backbone) return;
    FreezeResolution freeze;
    const auto backbone = make_backbone(spec.backbone, *data_, &freeze);
    if (!freeze_record_) freeze_record_ = to_json(freeze);
    const int64_t d = backbone->feature_dim();
    const double gram_bytes = 2.0 * 8.0 * static_cast<double>(d + 1) * static_cast<double>(d + 1);
    const double budget = 0.5 * physical_memory_bytes();
    for (size_t i = 0; i < spec.methods.size(); ++i) {
        const auto& info = method_info(spec.methods[i].name);
        if (info.family != MethodFamily::ClosedForm || gram_bytes <= budget) continue;
        const auto head = info.make_head(spec.methods[i], d, data_->output_dim());
        const bool distributed = options_.communicator != nullptr;
        if (!head->accumulates_gram() && !distributed) continue;
        const auto gb = [](double bytes) { return std::to_string(std::llround(bytes / 1e9)); };
        const std::string text =
            spec.methods[i].label + ": the backbone" +
            (spec.backbone.kind == "torchscript" ? " " + spec.backbone.script : "") + " gives " +
            std::to_string(d) + " features, and " +
            (distributed ? "a data-parallel closed form" : info.name) +
            " keeps a (d+1) × (d+1) float64 Gram matrix of them (" + gb(gram_bytes) +
            " GB with its Cholesky factor, more than half of this machine's " + gb(2 * budget) +
            " GB); use cf-ridge or cf-prox with batch_size below d (their Woodbury path solves a "
            "batch × batch system), or fewer features";
        throw SpecError("methods[" + std::to_string(i) + "].name", text);
    }
}

// A user's TorchScript model is checked on the run's data before a run folder exists: a file
// that is not TorchScript, a shape mismatch or a forward that throws is a spec error (exit 2).
// The check runs in a child process (training/model_probe.h): a crash, a hang or a model that eats
// the memory is a spec error too, and a stop ends the child at once (DataCancelled). Each model and
// data set is checked once per run (the sweep's sub-specs share the check).
void Run::check_user_models(const ExperimentSpec& spec) {
    const nlohmann::json task = to_json(spec)["task"];
    try {
        if (spec.backbone.kind == "torchscript") {
            auto b = to_json(spec)["backbone"];
            b.erase("script_sha256");  // recorded after the first check
            const std::string what = b.dump() + task.dump();
            if (checked_models_.insert(what).second) {
                model_hashes_[spec.backbone.script] =
                    check_backbone_in_child(spec, *data_, options_.stop);
                // Checked in the child: safe to load here for the width it gives.
                BackboneSpec probe = spec.backbone;
                probe.init = "file";  // the check draws nothing from the generators
                script_feature_dim_ = load_torchscript_backbone(probe, *data_)->feature_dim();
            }
        }
        if (!spec.icnn.script.empty()) {
            if (data_->x_train.dim() != 2)
                throw SpecError("icnn.script", "a TorchScript ICNN needs samples of n × d");
            auto c = to_json(spec)["icnn"];
            c.erase("script_sha256");
            const std::string what = c.dump() + task.dump();
            if (checked_models_.insert(what).second)
                model_hashes_[spec.icnn.script] = check_icnn_in_child(spec, *data_, options_.stop);
        }
    } catch (const ModelProbeCancelled&) {
        throw DataCancelled();  // as a stop during the data preparation: nothing is written
    }
}

// Every trainer loads the file again; with the hash of the checked file in its spec, a file
// changed during the run fails that trainer instead of training on something unrecorded.
void Run::record_model_hashes() {
    for (auto& sub : sub_specs_) {
        auto& b = sub.second.backbone;
        if (b.kind == "torchscript" && b.script_sha256.empty() && model_hashes_.count(b.script))
            b.script_sha256 = model_hashes_.at(b.script);
        auto& c = sub.second.icnn;
        if (!c.script.empty() && c.script_sha256.empty() && model_hashes_.count(c.script))
            c.script_sha256 = model_hashes_.at(c.script);
    }
}

// Bad data fails before a run folder exists (every sub-spec on the same data). False when the
// preparation was cancelled.
bool Run::prepare_data() {
    try {
        for (const auto& sub : sub_specs_)
            if (to_json(sub.second)["task"] == to_json(sub_specs_.front().second)["task"])
                load_data(sub.second);
    } catch (const DataCancelled&) {
        return false;
    }
    return true;
}

void Run::create_folder() {
    if (options_.resume) {
        // Continue in the killed run's folder (its spec.json and rows so far stay).
        store_.emplace(RunStore(options_.resume->dir));
        result_.run_dir = store_->dir();
        store_->write_json(run_folder::kSummary, summary_json(RunStatus::Running, {}));
        return;
    }
    const auto& comm = options_.communicator;
    const bool writer = !comm || comm->rank() == 0;  // data-parallel: rank 0 writes
    if (options_.out_dir.empty() || !writer) return;
    const std::string shard_suffix = options_.shard.sharded()
                                         ? "-shard" + std::to_string(options_.shard.index) + "of" +
                                               std::to_string(options_.shard.count)
                                         : "";
    store_.emplace(RunStore::create_staged(options_.out_dir, top_.name + shard_suffix));
    nlohmann::json resolved = to_json(top_);
    // The hashes of the users' model files, as checked (spec.json then repeats the same run).
    const auto& first = sub_specs_.front().second;
    resolved["backbone"]["script_sha256"] = first.backbone.script_sha256;
    resolved["icnn"]["script_sha256"] = first.icnn.script_sha256;
    if (freeze_record_) resolved["backbone_freeze"] = *freeze_record_;
    // What ran: a TorchScript backbone's own feature width.
    if (first.backbone.kind == "torchscript" && script_feature_dim_ > 0)
        resolved["backbone"]["feature_dim"] = script_feature_dim_;
    resolved["versions"] = version_info();
    resolved["data"] = {{"n_train", data_->n_train()},
                        {"n_test", data_->n_test()},
                        {"output_dim", data_->output_dim()},
                        {"num_classes", data_->num_classes}};
    resolved["world_size"] = comm ? comm->world_size() : 1;
    resolved["device_used"] = device_label(device_);
    if (options_.shard.sharded())
        resolved["shard"] = {{"index", options_.shard.index}, {"count", options_.shard.count}};
    store_->write_json(run_folder::kSpec, resolved);
    store_->write_json(run_folder::kSummary, summary_json(RunStatus::Running, {}));
    store_->publish();  // the folder appears with its spec and summary, or not at all
    result_.run_dir = store_->dir();
    // Held while this process writes the folder: a resume must not continue a live run.
    if (top_.save_state) lock_.emplace(store_->dir(), /*writer=*/true);
    write_test_data();
}

void Run::begin_live_events() {
    if (!options_.live_events) return;
    LiveEvents::RecordCallback record;
    if (store_) {
        store_->spec_sha256();  // the digest as started, read before any thread writes spec.json
        // A resumed run keeps the live events of its earlier sessions and adds its own after them.
        nlohmann::json earlier = nlohmann::json::array();
        if (options_.resume) {
            const auto j = read_json_file(store_->path(run_folder::kSpec));
            if (j.is_object() && j.contains("live_events")) earlier = j["live_events"];
        }
        record = [this, earlier](const std::vector<RunEvent>& events) {
            nlohmann::json all = earlier;
            for (const auto& e : events) all.push_back(to_json(e));
            store_->record_live_events(all);
        };
    }
    options_.live_events->begin_run(top_.steps, std::move(record),
                                    store_ ? store_->dir() : std::string());
}

// models/test_data.pt beside the exported models, so that a PyTorch user reproduces a logged
// test metric from the files alone; not for splits above 16 MB (the user has those data).
void Run::write_test_data() {
    constexpr int64_t kMaxTestDataBytes = int64_t{16} << 20;
    const auto& spec = sub_specs_.front().second;
    const auto& kind = task_kind_info(spec.task.kind);
    const bool exports = spec.export_models &&
                         (kind.family == TaskFamily::LastLayer
                              ? spec.backbone.kind == "mlp" || spec.backbone.kind == "torchscript"
                              : spec.task.kind == "icnn-ebm-1d" || spec.task.kind == "icnn-ebm-nd");
    int64_t bytes = 0;
    for (const auto* t : {&data_->x_test, &data_->y_test, &data_->labels_test})
        if (t->defined()) bytes += t->numel() * static_cast<int64_t>(t->element_size());
    if (!exports || bytes > kMaxTestDataBytes) return;
    auto module = test_data_module(*data_);
    save_module(module, store_->path(run_folder::kTestData));
}

// Every seed of sweep value `vi`. Seeds go on the available cores, each worker single-threaded:
// a seed's results do not depend on which worker runs it, so they match a `threads: 1` run bit
// for bit. One seed: its methods share the cores instead (same guarantee). Data-parallel ranks
// must issue their collectives in the same order: one worker.
void Run::run_sub_spec(int vi, RunReporter& reporter) {
    const std::string& suffix = sub_specs_[vi].first;
    const ExperimentSpec& spec = sub_specs_[vi].second;
    try {
        load_data(spec);
    } catch (const DataCancelled&) {
        cancelled_ = true;
        return;
    }
    const Probes probes = make_probes(spec, *data_);
    const int num_seeds = static_cast<int>(top_.seeds.size());
    const std::string sweep_value = top_.sweep.key.empty() ? "" : top_.sweep.values[vi].dump();
    reporter.begin_units(vi * num_seeds, num_seeds);
    const int threads = options_.communicator ? 1 : top_.threads;
    const int workers = std::min(threads, num_seeds);
    // Seeds that do not fill a round (3 seeds on 2 cores: the third) share the cores among their
    // methods instead (same guarantee), so no core idles through a lone seed.
    const int tail = num_seeds > workers ? num_seeds % workers : 0;
    auto run_unit = [&](int si, int method_threads) {
        const int unit = vi * num_seeds + si;
        if (!options_.shard.owns(unit)) {  // another shard's: nothing to run or write
            reporter.finished(unit, {});
            return;
        }
        const SeedUnit where{suffix, sweep_value, unit, si, num_seeds, method_threads};
        SeedRun(spec, where, *data_, probes, options_, reporter, cancelled_).run();
    };
    if (workers <= 1) {
        for (int si = 0; si < num_seeds && !cancelled_; ++si)
            run_unit(si, num_seeds == 1 ? threads : 1);
        return;
    }
    run_units_in_parallel(0, num_seeds - tail, workers,
                          [&](int si) { run_unit(si, std::max(1, threads / num_seeds)); });
    if (tail == 1 && !cancelled_)
        run_unit(num_seeds - 1, threads);
    else if (tail > 1 && !cancelled_)
        run_units_in_parallel(num_seeds - tail, num_seeds, tail,
                              [&](int si) { run_unit(si, threads / tail); });
}

// Seeds [first, last) on `workers` single-threaded workers.
void Run::run_units_in_parallel(int first, int last, int workers,
                                const std::function<void(int)>& run_unit) {
    const int num_seeds = last;
    set_compute_threads(1);
    std::atomic<int> next_seed{first};
    std::exception_ptr error;
    std::mutex error_mutex;
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w)
        pool.emplace_back([&] {
            torch::set_num_threads(1);  // this thread's intra-op pool
            for (int si = next_seed++; si < num_seeds && !cancelled_; si = next_seed++) {
                try {
                    run_unit(si);
                } catch (...) {
                    std::lock_guard<std::mutex> lock(error_mutex);
                    if (!error) error = std::current_exception();
                    cancelled_ = true;
                }
            }
        });
    for (auto& t : pool) t.join();
    set_compute_threads(top_.threads);
    if (error) std::rethrow_exception(error);
}

void Run::finish(RunReporter& reporter) {
    result_.runs = reporter.take_runs();
    bool any_ok = false, any_diverged = false;
    for (const auto& r : result_.runs) {
        any_ok = any_ok || r.status == RunStatus::Ok || r.status == RunStatus::Cancelled;
        any_diverged = any_diverged || r.status == RunStatus::Diverged;
    }
    // No method finished: `diverged` only if one did; methods that threw make the run `failed`.
    result_.status = cancelled_     ? RunStatus::Cancelled
                     : any_ok       ? RunStatus::Ok
                     : any_diverged ? RunStatus::Diverged
                                    : RunStatus::Failed;
    if (store_) {
        reporter.show_rows_kept_aside();  // a stopped run shows every unit's rows
        store_->close();                  // checked: a failed final flush is a failed run
        store_->write_json(run_folder::kSummary, summary_json(result_.status, result_.runs));
    }
}

RunResult Run::execute() {
    set_compute_threads(top_.threads);
    sub_specs_ = expand_sweep(top_);
    device_ = run_device(top_);
    if (options_.communicator) {
        if (!device_.is_cpu())
            throw SpecError("device", "data-parallel runs (Gloo) need device cpu, got " +
                                          device_label(device_));
        check_data_parallel_spec(top_, *options_.communicator);
    }
    if (!prepare_data()) {
        result_.status = RunStatus::Cancelled;
        return result_;
    }
    record_model_hashes();
    create_folder();
    begin_live_events();
    // The steps this process runs: a --shard runs only its own (sweep value × seed) cells.
    const int cells = static_cast<int>(sub_specs_.size() * top_.seeds.size());
    int owned = 0;
    for (int cell = 0; cell < cells; ++cell) owned += options_.shard.owns(cell) ? 1 : 0;
    const double total_units = static_cast<double>(std::max(owned, 1)) * top_.steps;
    RunReporter reporter(store_ ? &*store_ : nullptr, on_progress_, cancelled_, total_units);
    // A unit waiting for an earlier one writes its rows aside, so its state survives a kill.
    if (store_ && top_.save_state) reporter.keep_waiting_rows_aside(store_->dir());
    try {
        for (int vi = 0; vi < static_cast<int>(sub_specs_.size()) && !cancelled_; ++vi)
            run_sub_spec(vi, reporter);
    } catch (...) {
        result_.runs = reporter.take_all_runs();  // the failed summary lists every run
        throw;
    }
    finish(reporter);
    return result_;
}

bool Run::close_as_failed(const std::string& reason) {
    // Once a run folder exists, whatever goes wrong (a write error, a model that cannot be built,
    // out of memory) ends it as `failed` with the reason, never leaves it `running`.
    if (!store_) return false;
    for (auto& r : result_.runs)
        if (r.status == RunStatus::Running) {
            r.status = RunStatus::Failed;
            r.reason = reason;
        }
    try {
        store_->write_json(run_folder::kSummary,
                           summary_json(RunStatus::Failed, result_.runs, reason));
    } catch (const std::exception&) {
        // The folder cannot take even the summary; the caller reports the first error.
    }
    return true;
}

}  // namespace

RunResult run_experiment(const ExperimentSpec& spec, const RunOptions& given,
                         const ProgressCallback& on_progress) {
    // A forked run starts from its parent's kept states: read and checked before any folder.
    RunOptions options = given;
    if (!spec.parent.empty() && !options.fork) options.fork = prepare_fork(spec);
    if (options.resume) options.shard = options.resume->shard;  // a shard resumes its own cells
    // spec.json records the fork source as resolved (the parent's one method, when not named).
    ExperimentSpec recorded = spec;
    if (options.fork) recorded.fork_source = options.fork->fork_source;
    Run run(recorded, options, on_progress);
    // Events still pending when the run ends are refused; the record callback (into `run`) goes.
    struct EndLive {
        LiveEvents* live;
        ~EndLive() {
            if (live) live->end_run();
        }
    } end_live{options.live_events.get()};
    try {
        return run.execute();
    } catch (const std::exception& e) {
        run.close_as_failed(error_message(e));  // LibTorch's first line, never its backtrace
        throw;
    }
}

}  // namespace liftlab
