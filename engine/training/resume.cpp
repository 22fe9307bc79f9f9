#include "training/resume.h"

#include <unistd.h>

#include <filesystem>
#include <set>

#include "core/c_numbers.h"

#include "core/bounded_input.h"
#include "core/errors.h"
#include "core/sha256.h"
#include "icnn/positivity.h"
#include "methods/method_registry.h"
#include "run/folder_lock.h"
#include "run/run_store.h"
#include "run/state_archive.h"

namespace liftlab {

namespace fs = std::filesystem;

std::string unit_state_path(const std::string& dir, int unit) {
    return dir + "/" + run_folder::kResume + "/unit" + std::to_string(unit) + ".state";
}

std::string unit_rows_aside_path(const std::string& dir, int unit) {
    return dir + "/" + run_folder::kResume + "/unit" + std::to_string(unit) + ".rows";
}

ExperimentSpec resumable_spec(const std::string& dir) {
    const std::string file = dir + "/" + run_folder::kSpec;
    auto j = read_json_file(file);
    try {
        return parse_recorded_spec(j);
    } catch (const SpecError& e) {
        // "spec key 'k': what" → "spec key 'k': in DIR/spec.json: what"
        const std::string what = e.what();
        const auto colon = what.find("': ");
        throw SpecError(e.key(), "in " + file + ": " +
                                     (colon == std::string::npos ? what : what.substr(colon + 3)));
    }
}

void put_run_summary(StateArchive& a, const std::string& p, const MethodRunSummary& r) {
    a.put_text(p + "method", r.method);
    a.put_text(p + "name", r.name);
    a.put_text(p + "sweep_value", r.sweep_value);
    a.put_int(p + "seed", static_cast<int64_t>(r.seed));
    a.put_int(p + "batch_size", r.batch_size);
    a.put_text(p + "status", to_string(r.status));
    a.put_int(p + "steps_done", r.steps_done);
    a.put_text(p + "reason", r.reason);
    a.put_text(p + "model", r.model);
    a.put_text(p + "model_error", r.model_error);
    nlohmann::json keys = nlohmann::json::array();
    std::vector<double> values;
    for (const auto& [k, v] : r.final_metrics) {
        keys.push_back(k);
        values.push_back(v);
    }
    a.put_text(p + "final_keys", keys.dump());
    a.put(p + "final_values", torch::tensor(values, torch::kFloat64));
}

MethodRunSummary get_run_summary(const StateArchive& a, const std::string& p) {
    MethodRunSummary r;
    r.method = a.text(p + "method");
    r.name = a.text(p + "name");
    r.sweep_value = a.text(p + "sweep_value");
    r.seed = static_cast<std::uint64_t>(a.integer(p + "seed"));
    r.batch_size = static_cast<int>(a.integer(p + "batch_size"));
    const auto status = parse_run_status(a.text(p + "status"));
    if (!status) throw DataError("state", 0, "unknown status in " + p);
    r.status = *status;
    r.steps_done = static_cast<int>(a.integer(p + "steps_done"));
    r.reason = a.text(p + "reason");
    r.model = a.text(p + "model");
    r.model_error = a.text(p + "model_error");
    const auto keys = parse_json_bounded(a.text(p + "final_keys"), "state");
    const auto values = a.tensor(p + "final_values");
    if (!keys.is_array() || values.dim() != 1 ||
        static_cast<int64_t>(keys.size()) != values.numel() ||
        values.scalar_type() != torch::kFloat64)
        throw DataError("state", 0, "bad final metrics in " + p);
    for (size_t k = 0; k < keys.size(); ++k) {
        if (!keys[k].is_string()) throw DataError("state", 0, "bad final metrics in " + p);
        r.final_metrics[keys[k].get<std::string>()] =
            values[static_cast<int64_t>(k)].item<double>();
    }
    return r;
}

std::string fork_state_path(const std::string& dir, int unit, int step) {
    return dir + "/" + run_folder::kForkStates + "/unit" + std::to_string(unit) + "_step" +
           std::to_string(step) + ".state";
}

namespace {

// The steps unit `unit` of the run in `dir` kept a fork state at (states/unit<u>_step<s>.state).
std::set<int> fork_steps_of(const std::string& dir, int unit) {
    std::set<int> out;
    const std::string prefix = "unit" + std::to_string(unit) + "_step";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir + "/" + run_folder::kForkStates, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(prefix, 0) != 0 || name.size() <= prefix.size() + 6 ||
            name.substr(name.size() - 6) != ".state")
            continue;
        long long step = 0;
        if (c_parse_int(
                std::string_view(name).substr(prefix.size(), name.size() - 6 - prefix.size()), 0,
                2147483647LL, &step))
            out.insert(static_cast<int>(step));
    }
    return out;
}

std::vector<MethodRunSummary> runs_of(const StateArchive& a) {
    std::vector<MethodRunSummary> out;
    const int64_t n = a.integer("runs");
    if (n < 0 || n > 100000) throw DataError("state", 0, "bad run count");
    for (int64_t i = 0; i < n; ++i)
        out.push_back(get_run_summary(a, "run" + std::to_string(i) + "."));
    return out;
}

// The slice a shard's folder ran (its spec.json's "shard": {"index": K, "count": N}); the whole
// grid for an unsharded run.
Shard recorded_shard(const std::string& spec_file) {
    const auto j = read_json_file(spec_file);
    Shard shard;
    if (!j.is_object() || !j.contains("shard")) return shard;
    const auto& s = j["shard"];
    if (!s.is_object() || !s.contains("index") || !s.contains("count") ||
        !s["index"].is_number_integer() || !s["count"].is_number_integer())
        throw DataError(spec_file, 0, "\"shard\" is not {\"index\": K, \"count\": N}");
    const auto index = s["index"].get<long long>(), count = s["count"].get<long long>();
    if (count < 1 || count > 1000000 || index < 0 || index >= count)
        throw DataError(spec_file, 0, "\"shard\" is not a K/N with 0 <= K < N");
    shard.index = static_cast<int>(index);
    shard.count = static_cast<int>(count);
    return shard;
}

// The families a method can start from another of (ForkStart): "last-layer" (a backbone and a
// linear head: the gradient and closed-form methods), "icnn" (the positivity strategies); ""
// for none (dfiv).
std::string fork_family(const MethodInfo& info) {
    if (info.family == MethodFamily::Gradient || info.family == MethodFamily::ClosedForm)
        return "last-layer";
    if (info.family == MethodFamily::Positivity) return "icnn";
    return "";
}

// Whether `child` can start from the parent's `source`, another method (SpecError "methods").
void check_fork_family(const ExperimentSpec& spec, const MethodSpec& source,
                       const MethodSpec& child) {
    const auto& from = method_info(source.name);
    const auto& to = method_info(child.name);
    const std::string what = "method '" + child.label + "' (" + child.name +
                             ") cannot start from " + "the parent's '" + source.label + "' (" +
                             source.name + "): ";
    const std::string family = fork_family(to);
    if (family.empty() || fork_family(from).empty())
        throw SpecError("methods", what + to_string((family.empty() ? to : from).family) +
                                       " methods start only from their own state");
    if (family != fork_family(from))
        throw SpecError("methods", what + "another family (" + to_string(from.family) + " and " +
                                       to_string(to.family) +
                                       "): a fork starts a method from one of its own family");
    if (family != "icnn") return;
    if (spec.icnn.architecture != "liftlab")
        throw SpecError(
            "methods", what + "icnn.architecture " + spec.icnn.architecture +
                           " keeps each strategy's own state only (use icnn.architecture liftlab)");
    if (from.wide != to.wide)
        throw SpecError("methods", what + "softplus-wide trains a wider ICNN than the others");
    if (to.positivity == PositivityMap::Lifted &&
        !make_positivity(to.name, TensorShapeList(1, std::vector<int64_t>{1}), {}, 1)->has_slack())
        throw SpecError("methods", what + "without the slack b it cannot hold the parent's θ");
}

// The file sizes a unit state recorded (of the run's files, or of its rows aside).
std::vector<std::uint64_t> recorded_sizes(const StateArchive& a, const std::string& dir, int unit) {
    std::vector<std::uint64_t> sizes(RunStore::shared_files().size(), 0);
    const auto t = a.tensor("sizes");
    // A state saved before events.csv existed lists the four other files (events: none).
    if (t.scalar_type() != torch::kInt64 || t.numel() > static_cast<int64_t>(sizes.size()) ||
        t.numel() < static_cast<int64_t>(sizes.size()) - 1)
        throw DataError(unit_state_path(dir, unit), 0, "bad file sizes");
    for (size_t i = 0; i < static_cast<size_t>(t.numel()); ++i) {
        const auto v = t[static_cast<int64_t>(i)].item<int64_t>();
        if (v < 0) throw DataError(unit_state_path(dir, unit), 0, "bad file sizes");
        sizes[i] = static_cast<std::uint64_t>(v);
    }
    return sizes;
}

// Each shared file of `folder` holds at least the bytes a state recorded.
void check_sizes(const std::string& folder, const std::vector<std::uint64_t>& sizes) {
    for (size_t i = 0; i < sizes.size(); ++i) {
        const std::string file = folder + "/" + RunStore::shared_files()[i];
        std::error_code ec;
        const bool exists = fs::exists(file, ec);
        const std::uint64_t have = exists ? fs::file_size(file, ec) : 0;
        if (have < sizes[i])
            throw DataError(file, 0,
                            "is shorter (" + std::to_string(have) +
                                " bytes) than the saved state says (" + std::to_string(sizes[i]) +
                                ")");
    }
}

void cut_files(const std::string& folder, const std::vector<std::uint64_t>& sizes) {
    for (size_t i = 0; i < sizes.size(); ++i) {
        const std::string file = folder + "/" + RunStore::shared_files()[i];
        std::error_code ec;
        if (!fs::exists(file, ec)) continue;
        if (sizes[i] == 0 && i > 0) {
            fs::remove(file, ec);  // created after the state: written again from its header
        } else if (::truncate(file.c_str(), static_cast<off_t>(sizes[i])) != 0) {
            throw WriteError(file, "cannot cut it back to the saved state");
        }
    }
}

}  // namespace

std::shared_ptr<const ResumePlan> prepare_resume(const std::string& dir,
                                                 const ExperimentSpec& spec) {
    auto plan = std::make_shared<ResumePlan>();
    plan->dir = dir;
    try {
        plan->lock = std::make_shared<FolderLock>(dir, /*writer=*/true);
    } catch (const WriteError&) {
        throw;
    } catch (const std::exception& e) {
        throw SpecError("resume", e.what());
    }
    const std::string status = read_summary_json(dir + "/" + run_folder::kSummary).status;
    if (status == "ok" || status == "diverged")
        throw SpecError("resume", dir + " finished (status " + status + "): nothing to resume");
    if (!spec.save_state)
        throw SpecError("resume", dir +
                                      " was run with save_state off: it saved no state to "
                                      "resume from");
    const auto units = static_cast<int>(expand_sweep(spec).size() * spec.seeds.size());
    const std::string spec_file = dir + "/" + run_folder::kSpec;
    const std::string spec_digest =
        spec_file_sha256(read_regular_file(spec_file, kMaxJsonFileBytes));
    plan->shard = recorded_shard(spec_file);
    const Shard& shard = plan->shard;
    int last = -1;          // the last unit whose state saw the run's files
    int missing = -1;       // the first owned unit without a state
    std::vector<int> held;  // units whose states saw their rows aside (training/run_reporter.h)
    for (int u = 0; u < units; ++u) {
        const std::string file = unit_state_path(dir, u);
        if (!shard.owns(u)) {
            if (fs::exists(file))
                throw DataError(
                    file, 0, "a state of a unit this shard (" + shard.label() + ") does not own");
            continue;
        }
        if (!fs::exists(file)) {
            if (missing < 0) missing = u;
            continue;
        }
        auto a = std::make_shared<StateArchive>(StateArchive::read_file(file));
        UnitResumeState s;
        s.unit = u;
        if (a->integer("unit") != u) throw DataError(file, 0, "holds another unit's state");
        s.step = static_cast<int>(a->integer("step"));
        if (s.step < 0 || s.step > spec.steps) throw DataError(file, 0, "step out of range");
        // The states continue the spec they were saved under: an edited spec.json would mix two
        // runs in one folder.
        if (a->has("spec_sha256") && a->text("spec_sha256") != spec_digest)
            throw SpecError("resume", spec_file + " changed since the run saved its state (unit " +
                                          std::to_string(u) +
                                          "): --resume continues the run the folder started; "
                                          "put the file back, or start a new run from it");
        s.finished = a->integer("finished") != 0;
        if (s.finished) s.runs = runs_of(*a);
        s.held = a->has("held") && a->integer("held") != 0;
        s.archive = a;
        // A unit that cannot be continued mid-way (its start marker: "blocked" says why) runs
        // again from its start; its files are cut back to where its rows began.
        s.restart = !s.finished && a->has("blocked");
        if (s.restart) s.step = 0;
        // The run's files hold the units in order: a state that saw them follows the states
        // that did, with none missing before it.
        if (!s.held) {
            if (missing >= 0)
                throw DataError(
                    file, 0,
                    "a state of a later unit without one of unit " + std::to_string(missing));
            if (!held.empty())
                throw DataError(file, 0,
                                "saw the run's files after unit " + std::to_string(held.front()) +
                                    " wrote its rows aside");
            last = u;
        } else {
            held.push_back(u);
        }
        plan->units[u] = std::move(s);
    }
    for (const auto& [u, s] : plan->units)
        if (!s.held && u < last && !s.finished)
            throw DataError(unit_state_path(dir, u), 0,
                            "unit " + std::to_string(u) + " is not finished but a later one ran");
    // Cut the run's files back to what the last state that saw them had seen (nothing of a unit
    // after it was written there: its rows wait aside or in memory), and each held unit's rows
    // aside to what its state had seen. Everything is checked before anything is cut.
    const size_t n_files = RunStore::shared_files().size();
    std::vector<std::pair<std::string, std::vector<std::uint64_t>>> cuts;
    cuts.emplace_back(dir, std::vector<std::uint64_t>(n_files, 0));
    if (last >= 0) cuts.back().second = recorded_sizes(*plan->units.at(last).archive, dir, last);
    for (int u : held)
        cuts.emplace_back(unit_rows_aside_path(dir, u),
                          recorded_sizes(*plan->units.at(u).archive, dir, u));
    for (const auto& [folder, sizes] : cuts) check_sizes(folder, sizes);
    for (const auto& [folder, sizes] : cuts) cut_files(folder, sizes);
    // Rows aside of a unit that runs again from its start, or that a committed state saw
    // already (a kill after the rows joined the run's files), go.
    for (int u = 0; u < units; ++u) {
        const auto* s = plan->find(u);
        if (s && s->held) continue;
        std::error_code ec;
        fs::remove_all(unit_rows_aside_path(dir, u), ec);
        if (ec) throw WriteError(unit_rows_aside_path(dir, u), ec.message());
    }
    // (No state at all — killed before the first unit saved one — cuts metrics.csv to nothing:
    // the run store writes its header again.)
    return plan;
}

ExperimentSpec fork_parent_spec(const std::string& parent_dir) {
    return resumable_spec(parent_dir);
}

std::vector<int> kept_fork_steps(const std::string& parent_dir) {
    const ExperimentSpec parent = fork_parent_spec(parent_dir);
    const auto units = static_cast<int>(expand_sweep(parent).size() * parent.seeds.size());
    std::set<int> common;
    for (int u = 0; u < units; ++u) {
        const auto steps = fork_steps_of(parent_dir, u);
        if (u == 0) {
            common = steps;
        } else {
            std::set<int> both;
            for (int s : steps)
                if (common.count(s)) both.insert(s);
            common = both;
        }
    }
    return {common.begin(), common.end()};
}

int latest_fork_step(const std::string& parent_dir, int step) {
    const std::vector<int> common = kept_fork_steps(parent_dir);
    int best = -1;
    for (int s : common)
        if (s <= step) best = std::max(best, s);
    if (best < 0) {
        std::string have;
        for (int s : common) have += (have.empty() ? "" : ", ") + std::to_string(s);
        throw SpecError(
            "--from-step",
            parent_dir + " kept no state at or before step " + std::to_string(step) +
                (common.empty() ? std::string(" (it kept none: run it with --set "
                                              "fork_state_every=K to keep a state every K log "
                                              "points)")
                                : " (its fork steps: " + have + ")"));
    }
    return best;
}

std::shared_ptr<ForkPlan> check_fork(const ExperimentSpec& child) {
    auto plan = std::make_shared<ForkPlan>();
    plan->parent = child.parent;
    plan->step = child.fork_step;
    const ExperimentSpec parent = fork_parent_spec(child.parent);
    // The child continues each of the parent's units: the same seeds and sweep.
    if (parent.seeds != child.seeds)
        throw SpecError("seeds",
                        "a fork keeps its parent's seeds (" + child.parent + " ran other seeds)");
    if (parent.sweep.key != child.sweep.key || parent.sweep.values != child.sweep.values)
        throw SpecError(
            "sweep", "a fork keeps its parent's sweep (" + child.parent + " swept something else)");
    std::string labels;
    const MethodSpec* only = parent.methods.size() == 1 ? &parent.methods.front() : nullptr;
    auto in_parent = [&](const std::string& label) -> const MethodSpec* {
        for (const auto& pm : parent.methods)
            if (pm.label == label) return &pm;
        return nullptr;
    };
    for (const auto& pm : parent.methods) labels += (labels.empty() ? "" : ", ") + pm.label;
    const MethodSpec* named = nullptr;
    if (!child.fork_source.empty()) {
        named = in_parent(child.fork_source);
        if (!named)
            throw SpecError("fork_source", "'" + child.fork_source + "' is not a method of " +
                                               child.parent + " (its methods: " + labels + ")");
        plan->fork_source = named->label;
    }
    for (const auto& m : child.methods) {
        const MethodSpec* source = in_parent(m.label);
        if (!source) {
            source = named ? named : only;
            if (!source)
                throw SpecError("methods",
                                "method '" + m.label + "' has no state in the parent " +
                                    child.parent + " (its methods: " + labels +
                                    "): name the method it starts from with --fork-from-method "
                                    "LABEL (spec key fork_source), or keep a label the parent "
                                    "ran (a swapped method keeps the label it replaces)");
            plan->fork_source = source->label;
        }
        if (source->name != m.name) check_fork_family(child, *source, m);
        plan->sources[m.label] = *source;
    }
    // A named source no child method starts from would be ignored without a word: every child
    // label the parent ran continues its own method.
    if (named) {
        bool used = false;
        for (const auto& [label, source] : plan->sources)
            used = used || source.label == named->label;
        if (!used)
            throw SpecError("fork_source",
                            "no method of the fork starts from '" + named->label +
                                "': each child label the parent ran continues its own state; "
                                "give the method to start from it a label the parent did not run "
                                "(e.g. --set 'methods=[{\"name\": \"lifter\", \"label\": "
                                "\"lifter-from-" +
                                named->label + "\"}]')");
    }
    const auto units = static_cast<int>(expand_sweep(parent).size() * parent.seeds.size());
    for (int u = 0; u < units; ++u) {
        const std::string file = fork_state_path(child.parent, u, child.fork_step);
        if (!fs::exists(file))
            throw SpecError("fork_step", child.parent + " kept no state of unit " +
                                             std::to_string(u) + " at step " +
                                             std::to_string(child.fork_step) + " (" + file + ")");
    }
    return plan;
}

std::shared_ptr<const ForkPlan> prepare_fork(const ExperimentSpec& child) {
    const std::shared_ptr<ForkPlan> plan = check_fork(child);
    const std::string spec_file = child.parent + "/" + run_folder::kSpec;
    const std::string digest = spec_file_sha256(read_regular_file(spec_file, kMaxJsonFileBytes));
    const ExperimentSpec parent = fork_parent_spec(child.parent);
    const auto units = static_cast<int>(expand_sweep(parent).size() * parent.seeds.size());
    for (int u = 0; u < units; ++u) {
        const std::string file = fork_state_path(child.parent, u, child.fork_step);
        auto a = std::make_shared<StateArchive>(StateArchive::read_file(file));
        if (a->integer("unit") != u || a->integer("step") != child.fork_step ||
            a->integer("finished") != 0 || a->has("blocked"))
            throw DataError(file, 0,
                            "is not unit " + std::to_string(u) + "'s state at step " +
                                std::to_string(child.fork_step));
        if (a->has("spec_sha256") && a->text("spec_sha256") != digest)
            throw SpecError("parent", spec_file + " changed since the run kept its fork states");
        plan->units[u] = a;
    }
    return plan;
}

}  // namespace liftlab
