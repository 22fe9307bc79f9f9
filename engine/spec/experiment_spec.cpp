#include "spec/experiment_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "core/bounded_input.h"
#include "core/c_numbers.h"
#include "core/device.h"
#include "core/errors.h"
#include "core/path_component.h"
#include "spec/spec_fields.h"

namespace liftlab {

namespace {

// A value for an error message: scalars as JSON, containers by kind and size only (a container
// may be large, and dumping it recursively is what a hostile input would exploit). Every dump of
// a user's value in this file replaces invalid UTF-8 instead of throwing (found by fuzz_spec:
// a `--set` value with a 0xFF byte terminated the process while its error was being built).
std::string describe(const nlohmann::json& v) {
    if (v.is_array()) return "an array of " + std::to_string(v.size()) + " element(s)";
    if (v.is_object()) return "an object with " + std::to_string(v.size()) + " key(s)";
    std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > 80) text = text.substr(0, 77) + "...";
    return text;
}

// "0,5" where a number belongs: numbers in a spec or --set take the C decimal point, whatever
// the locale, and saying so beats "expected a number".
std::string decimal_comma_hint(const nlohmann::json& v) {
    if (!v.is_string()) return "";
    std::string text = v.get<std::string>();
    const auto comma = text.find(',');
    if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos) return "";
    text[comma] = '.';
    double parsed = 0;
    if (!c_parse_double(text, &parsed)) return "";
    return " (numbers take a '.' decimal point whatever the locale: " + text + ")";
}

// Reads the fields of one JSON object and remembers which keys were used, so that `finish`
// can report the first unknown key (typos must not be silently ignored).
class ObjectReader {
public:
    ObjectReader(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {
        if (!j_.is_object())
            throw SpecError(path_.empty() ? "<root>" : path_, "expected an object");
    }

    std::string key(const std::string& k) const { return path_.empty() ? k : path_ + "." + k; }
    bool has(const std::string& k) const { return j_.contains(k); }
    const nlohmann::json& raw(const std::string& k) {
        used_.insert(k);
        return j_.at(k);
    }

    template <typename T>
    void read(const std::string& k, T& out) {
        if (!j_.contains(k)) return;
        used_.insert(k);
        out = convert<T>(j_.at(k), key(k));
    }

    void finish() const {
        for (auto it = j_.begin(); it != j_.end(); ++it)
            if (!used_.count(it.key())) throw SpecError(key(it.key()), "unknown key");
    }

    template <typename T>
    static T convert(const nlohmann::json& v, const std::string& key) {
        if constexpr (std::is_same_v<T, bool>) {
            if (!v.is_boolean()) throw SpecError(key, "expected true or false, got " + describe(v));
            return v.get<bool>();
        } else if constexpr (std::is_same_v<T, std::string>) {
            if (!v.is_string()) throw SpecError(key, "expected a string, got " + describe(v));
            return v.get<std::string>();
        } else if constexpr (std::is_integral_v<T>) {
            if (!v.is_number_integer())
                throw SpecError(key, "expected an integer, got " + describe(v));
            if constexpr (std::is_unsigned_v<T>) {
                if (!v.is_number_unsigned() && v.get<std::int64_t>() < 0)
                    throw SpecError(key, "expected a non-negative integer, got " + describe(v));
            }
            // No silent narrowing: 4294967328 must not become 32.
            bool fits;
            if (v.is_number_unsigned()) {
                fits = v.get<std::uint64_t>() <=
                       static_cast<std::uint64_t>(std::numeric_limits<T>::max());
            } else {
                const std::int64_t x = v.get<std::int64_t>();
                fits = x < 0 ? std::is_signed_v<T> &&
                                   x >= static_cast<std::int64_t>(std::numeric_limits<T>::min())
                             : static_cast<std::uint64_t>(x) <=
                                   static_cast<std::uint64_t>(std::numeric_limits<T>::max());
            }
            if (!fits)
                throw SpecError(
                    key, "integer " +
                             v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                             " is out of range [" + std::to_string(std::numeric_limits<T>::min()) +
                             ", " + std::to_string(std::numeric_limits<T>::max()) + "]");
            return v.get<T>();
        } else if constexpr (std::is_same_v<T, nlohmann::json>) {
            return v;  // sweep.values: any JSON value
        } else if constexpr (std::is_floating_point_v<T>) {
            if (!v.is_number())
                throw SpecError(key,
                                "expected a number, got " + describe(v) + decimal_comma_hint(v));
            return v.get<T>();
        } else {
            // std::vector<U>
            using U = typename T::value_type;
            if (!v.is_array()) throw SpecError(key, "expected an array, got " + describe(v));
            T out;
            for (size_t i = 0; i < v.size(); ++i)
                out.push_back(convert<U>(v[i], key + "[" + std::to_string(i) + "]"));
            return out;
        }
    }

private:
    const nlohmann::json& j_;
    std::string path_;
    std::set<std::string> used_;
};

void require(bool ok, const std::string& key, const std::string& what) {
    if (!ok) throw SpecError(key, what);
}

// Reads every plain field visit_fields lists for `s` (spec/spec_fields.h).
template <typename S>
void read_fields(ObjectReader& r, S& s) {
    visit_fields(s, [&r](const char* k, auto& member, const char*) { r.read(k, member); });
}

// A recorded file hash: empty (not recorded) or 64 lower-case hexadecimal digits.
bool is_sha256_text(const std::string& text) {
    if (text.empty()) return true;
    return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

void require_one_of(const std::string& value, const std::vector<std::string>& allowed,
                    const std::string& key) {
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw SpecError(key, "'" + value + "' is not one of: " + list);
}

// `check` false: types only (read_spec_fields), none of the value checks below.
TaskSpec parse_task(const nlohmann::json& j, bool check) {
    TaskSpec t;
    ObjectReader r(j, "task");
    r.read("kind", t.kind);
    if (check) require_one_of(t.kind, task_kind_names(), r.key("kind"));
    read_fields(r, t);
    const TaskKindInfo* kind_info = find_task_kind(t.kind);
    const auto& sampled = kind_info ? kind_info->sampled_targets : std::vector<std::string>{};
    const bool samplable = std::find(sampled.begin(), sampled.end(), t.target) != sampled.end();
    if (!r.has("fresh_samples")) t.fresh_samples = samplable;  // where the target can be sampled
    r.finish();
    if (!check) return t;
    const TaskKindInfo& kind = *kind_info;
    require_one_of(t.split, {"test", "validation"}, r.key("split"));
    require(t.validation_fraction > 0 && t.validation_fraction < 1, r.key("validation_fraction"),
            "must lie in (0, 1)");
    require(t.split != "validation" || t.kind != "dfiv-demand", r.key("split"),
            "dfiv-demand scores the structural function on a grid, which has no validation "
            "counterpart among the training rows");
    require(t.split != "validation" || !t.test_per_seed, r.key("split"),
            "validation holds out training rows; task.test_per_seed draws the scored rows per "
            "seed instead (turn one of them off)");
    require(!t.fresh_samples || samplable, r.key("fresh_samples"),
            "needs a target that can be sampled (icnn-ebm-1d, or icnn-ebm-nd's gaussian, "
            "gumbel or correlated, cpflow-toy's 8gaussians-demo or 2spirals-demo; not a data "
            "set)");
    require(!t.test_per_seed || t.fresh_samples, r.key("test_per_seed"),
            "draws each seed's test samples from the target: needs task.fresh_samples");
    if (!kind.targets.empty()) require_one_of(t.target, kind.targets, r.key("target"));
    require(t.dim >= 1 && t.dim <= 64, r.key("dim"), "must lie in [1, 64]");
    require(t.latent_steps > 0, r.key("latent_steps"), "must be positive");
    require(t.rho >= -1 && t.rho <= 1, r.key("rho"), "must lie in [-1, 1]");
    require(t.input_dim > 0, r.key("input_dim"), "must be positive");
    require(t.output_dim > 0, r.key("output_dim"), "must be positive");
    for (size_t i = 0; i < t.teacher_hidden.size(); ++i)
        require(t.teacher_hidden[i] > 0, r.key("teacher_hidden[" + std::to_string(i) + "]"),
                "must be positive");
    require(t.noise >= 0, r.key("noise"), "must be non-negative");
    const bool capped = kind.classification;  // 0: every sample of the data set
    require(t.n_train > 0 || (capped && t.n_train == 0), r.key("n_train"), "must be positive");
    require(t.n_test > 0 || (capped && t.n_test == 0), r.key("n_test"), "must be positive");
    require(t.resolution > 1, r.key("resolution"), "must be at least 2");
    require(t.fine_grid >= t.resolution && t.fine_grid % t.resolution == 0, r.key("fine_grid"),
            "must be a multiple of task.resolution");
    require(t.viscosity > 0, r.key("viscosity"), "must be positive");
    require(t.final_time > 0, r.key("final_time"), "must be positive");
    require(t.label_bytes == 1 || t.label_bytes == 2, r.key("label_bytes"), "must be 1 or 2");
    require(t.label_index >= 0 && t.label_index < t.label_bytes, r.key("label_index"),
            "must be below label_bytes");
    require(t.test_fraction > 0 && t.test_fraction < 1, r.key("test_fraction"),
            "must lie in (0, 1)");
    if (kind.check) kind.check(t);
    return t;
}

// backbone.freeze: true / false, a list of parameter names, or a regular expression.
void parse_freeze(const nlohmann::json& v, const std::string& key, BackboneSpec& b) {
    if (v.is_boolean()) {
        b.freeze_all = v.get<bool>();
    } else if (v.is_array()) {
        b.freeze_names = ObjectReader::convert<std::vector<std::string>>(v, key);
        std::set<std::string> seen;
        for (size_t i = 0; i < b.freeze_names.size(); ++i)
            require(seen.insert(b.freeze_names[i]).second, key + "[" + std::to_string(i) + "]",
                    "'" + b.freeze_names[i] + "' is listed twice");
    } else if (v.is_string()) {
        b.freeze_regex = v.get<std::string>();
        require(!b.freeze_regex.empty(), key,
                "an empty regular expression freezes nothing (use false, true, a list of "
                "parameter names or a regular expression)");
        try {
            std::regex check(b.freeze_regex);
        } catch (const std::regex_error& e) {
            throw SpecError(
                key, "'" + b.freeze_regex + "' is not a valid regular expression: " + e.what());
        }
    } else {
        throw SpecError(key,
                        "expected true, false, a list of parameter names or a regular expression "
                        "(matched against whole dotted names), got " +
                            describe(v));
    }
}

nlohmann::json freeze_json(const BackboneSpec& b) {
    if (b.freeze_all) return true;
    if (!b.freeze_names.empty()) return b.freeze_names;
    if (!b.freeze_regex.empty()) return b.freeze_regex;
    return false;
}

BackboneSpec parse_backbone(const nlohmann::json& j, bool check) {
    BackboneSpec b;
    ObjectReader r(j, "backbone");
    r.read("kind", b.kind);
    if (check) require_one_of(b.kind, {"mlp", "fno1d", "cnn", "torchscript"}, r.key("kind"));
    read_fields(r, b);
    if (r.has("freeze")) parse_freeze(r.raw("freeze"), r.key("freeze"), b);
    r.finish();
    if (!check) return b;
    require(b.kind != "torchscript" || !b.script.empty(), r.key("script"),
            "is required for backbone.kind torchscript: the path of a TorchScript file "
            "(torch.jit.script(model).save(path))");
    require(b.kind == "torchscript" || b.script.empty(), r.key("script"),
            "is only read with backbone.kind torchscript");
    require_one_of(b.init, {"file", "reset"}, r.key("init"));
    require(is_sha256_text(b.script_sha256), r.key("script_sha256"),
            "must be empty or 64 lower-case hexadecimal digits");
    require(b.modes > 0, r.key("modes"), "must be positive");
    require(b.width > 0, r.key("width"), "must be positive");
    require(b.layers > 0, r.key("layers"), "must be positive");
    for (size_t i = 0; i < b.channels.size(); ++i)
        require(b.channels[i] > 0, r.key("channels[" + std::to_string(i) + "]"),
                "must be positive");
    require_one_of(b.activation, {"tanh", "relu", "gelu"}, r.key("activation"));
    require(b.feature_dim > 0, r.key("feature_dim"), "must be positive");
    for (size_t i = 0; i < b.hidden.size(); ++i)
        require(b.hidden[i] > 0, r.key("hidden[" + std::to_string(i) + "]"), "must be positive");
    return b;
}

IcnnSpec parse_icnn(const nlohmann::json& j, bool check) {
    IcnnSpec c;
    ObjectReader r(j, "icnn");
    read_fields(r, c);
    r.finish();
    if (!check) return c;
    if (!c.script.empty())
        require(c.constrained.empty() != c.constrained_regex.empty(), r.key("constrained"),
                "name the non-negative parameters of " + c.script +
                    ": a list of names (icnn.constrained) or a regular expression "
                    "(icnn.constrained_regex), one of the two");
    else
        require(c.constrained.empty() && c.constrained_regex.empty(), r.key("constrained"),
                "is only read with icnn.script");
    if (!c.constrained_regex.empty()) {
        try {
            std::regex check(c.constrained_regex);
        } catch (const std::regex_error& e) {
            throw SpecError(
                r.key("constrained_regex"),
                "'" + c.constrained_regex + "' is not a valid regular expression: " + e.what());
        }
    }
    require_one_of(c.init, {"file", "reset"}, r.key("init"));
    require(is_sha256_text(c.script_sha256), r.key("script_sha256"),
            "must be empty or 64 lower-case hexadecimal digits");
    require_one_of(c.architecture, {"liftlab", "cpflow-published"}, r.key("architecture"));
    require(c.width > 0, r.key("width"), "must be positive");
    require(c.blocks >= 1, r.key("blocks"), "must be at least 1");
    require(c.layers > 0, r.key("layers"), "must be positive");
    require(c.grad_clip >= 0, r.key("grad_clip"), "must be non-negative");
    require(c.reference_size > 1, r.key("reference_size"), "must be at least 2");
    require_one_of(c.eval_conditioning, {"reference", "scored"}, r.key("eval_conditioning"));
    require(std::isfinite(c.strong_convexity) && c.strong_convexity >= 0, r.key("strong_convexity"),
            "must be a non-negative number");
    require(!c.lifter_body.empty(), r.key("lifter_body"), "needs at least one layer width");
    for (size_t i = 0; i < c.lifter_body.size(); ++i)
        require(c.lifter_body[i] > 0 && c.lifter_body[i] <= 65536,
                r.key("lifter_body[" + std::to_string(i) + "]"), "must lie in [1, 65536]");
    require(c.flow_scales || c.strong_convexity > 0, r.key("flow_scales"),
            "false needs icnn.strong_convexity > 0 (without the scales it is the Hessian's only "
            "floor)");
    require(c.quadrature_points >= 16, r.key("quadrature_points"), "must be at least 16");
    require(c.train_quadrature_points == 0 ||
                (c.train_quadrature_points >= 16 && c.train_quadrature_points % 8 == 0),
            r.key("train_quadrature_points"),
            "must be 0 (the evaluation grid) or a multiple of 8, at least 16");
    require(c.is_samples > 1, r.key("is_samples"), "must be at least 2");
    require(c.eval_is_samples > 1, r.key("eval_is_samples"), "must be at least 2");
    require_one_of(c.proposal, {"flow", "gaussian", "student-t"}, r.key("proposal"));
    require(c.proposal_dof > 2, r.key("proposal_dof"), "must be greater than 2");
    require(c.proposal_inflate > 0, r.key("proposal_inflate"), "must be positive");
    require(c.flow_layers > 0, r.key("flow_layers"), "must be positive");
    require(c.flow_hidden > 0, r.key("flow_hidden"), "must be positive");
    require(c.flow_fit_steps >= 0, r.key("flow_fit_steps"), "must be non-negative");
    require(c.flow_refine_steps >= 0, r.key("flow_refine_steps"), "must be non-negative");
    require(c.flow_refine_lr > 0, r.key("flow_refine_lr"), "must be positive");
    require(c.proposal_adapt_steps >= 0, r.key("proposal_adapt_steps"), "must be non-negative");
    require(c.proposal_adapt_steps == 0 || c.proposal == "flow", r.key("proposal_adapt_steps"),
            "needs icnn.proposal = flow");
    require(!c.proposal_adapt_train || c.proposal_adapt_steps > 0, r.key("proposal_adapt_train"),
            "needs icnn.proposal_adapt_steps > 0");
    require(c.proposal_adapt_batch > 0, r.key("proposal_adapt_batch"), "must be positive");
    require(c.proposal_adapt_lr > 0, r.key("proposal_adapt_lr"), "must be positive");
    require(c.proposal_adapt_target_ess > 0, r.key("proposal_adapt_target_ess"),
            "must be positive");
    require(c.proposal_defensive_weight >= 0 && c.proposal_defensive_weight < 1,
            r.key("proposal_defensive_weight"), "must be in [0, 1)");
    require(c.proposal_defensive_inflate > 0, r.key("proposal_defensive_inflate"),
            "must be positive");
    return c;
}

OptimizerSpec parse_optimizer(const nlohmann::json& j, bool check) {
    OptimizerSpec o;
    ObjectReader r(j, "optimizer");
    r.read("kind", o.kind);
    if (check) require_one_of(o.kind, optimizer_kinds(), r.key("kind"));
    read_fields(r, o);
    r.finish();
    if (!check) return o;
    require(o.lr_step_every >= 0, r.key("lr_step_every"), "must be non-negative (0: constant)");
    require(o.lr_step_gamma > 0 && o.lr_step_gamma <= 1, r.key("lr_step_gamma"),
            "must lie in (0, 1]");
    require(o.lr > 0, r.key("lr"), "must be positive");
    require(o.momentum >= 0 && o.momentum < 1, r.key("momentum"), "must lie in [0, 1)");
    return o;
}

MethodSpec parse_method(const nlohmann::json& j, const std::string& path, bool check) {
    ObjectReader r(j, path);
    if (!r.has("name")) throw SpecError(r.key("name"), "is required");
    std::string name;
    r.read("name", name);
    require_one_of(name, method_names(), r.key("name"));
    // What the method does not set takes the registry's defaults (adam's step size, …).
    MethodSpec m = default_method(name);
    r.read("label", m.label);
    for (const auto& p : method_parameters()) {
        if (p.real) r.read(p.key, m.*p.real);
        if (p.integer) r.read(p.key, m.*p.integer);
    }
    r.finish();
    if (!check) return m;
    for (const auto& p : method_parameters())
        require(!p.valid || p.valid(p.get(m)), r.key(p.key), p.rule);
    require(!m.label.empty(), r.key("label"), "must not be empty");
    // Labels name files (trajectories/<label>_seed<k>.pt) and CSV cells.
    require(is_safe_path_component(m.label), r.key("label"),
            "'" + m.label +
                "' is not a valid label: use letters, digits and - _ . @ = only (no '/', "
                "no '..', at most 200 characters)");
    for (const auto& key : method_info(m.name).positive)
        require(find_method_parameter(key)->get(m) > 0, r.key(key),
                "must be positive for " + m.name);
    return m;
}

// The task kinds for which `pick` holds, for messages ("fashion-mnist or cifar-binary").
std::string task_names(const std::function<bool(const TaskKindInfo&)>& pick) {
    std::vector<std::string> names;
    for (const auto& t : task_kind_registry())
        if (pick(t)) names.push_back(t.name);
    std::string out;
    for (size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
}

// Why `method` cannot run on a task of `kind`, naming what each side would take.
std::string family_mismatch(const TaskKindInfo& kind, const MethodInfo& method) {
    std::string takes;
    for (const auto& m : method_registry())
        if (takes_methods(kind.family, m.family)) takes += (takes.empty() ? "" : ", ") + m.name;
    return "the " + kind.name + " task takes the methods " + takes + "; " + method.name +
           " needs a task of kind " + task_names([&](const TaskKindInfo& t) {
               return takes_methods(t.family, method.family);
           });
}

SweepSpec parse_sweep(const nlohmann::json& j, bool check) {
    SweepSpec sweep;
    ObjectReader sr(j, "sweep");
    read_fields(sr, sweep);
    sr.finish();
    if (!check) return sweep;
    require(sweep.key.empty() == sweep.values.empty(), "sweep", "needs both a key and values");
    require(sweep.key != "seeds" && sweep.key.rfind("sweep", 0) != 0, "sweep.key",
            "cannot sweep over seeds or the sweep itself (use seeds)");
    return sweep;
}

DiagnosticsSpec parse_diagnostics(const nlohmann::json& j, bool check) {
    DiagnosticsSpec d;
    ObjectReader dr(j, "diagnostics");
    read_fields(dr, d);
    dr.finish();
    if (!check) return d;
    require(d.shoulder_every >= 0, "diagnostics.shoulder_every", "must be non-negative");
    require(d.trace_coordinates >= 0, "diagnostics.trace_coordinates", "must be non-negative");
    require(d.checkpoint_every >= 0, "diagnostics.checkpoint_every", "must be non-negative");
    require(d.jacobian_batches == 0 || d.jacobian_batches >= 3, "diagnostics.jacobian_batches",
            "must be 0 (off) or at least 3");
    require(d.permutations >= 1 && d.permutations <= 1000000, "diagnostics.permutations",
            "must lie in [1, 1000000] (p = (1 + #)/(1 + permutations) resolves 1e-6 at most)");
    require(d.spectrum_every >= 0, "diagnostics.spectrum_every", "must be non-negative");
    require(d.probe_size > 1, "diagnostics.probe_size", "must be at least 2");
    require(d.one_step_every >= 0, "diagnostics.one_step_every", "must be non-negative");
    return d;
}

// The run's own settings: name, methods' labels, sizes, seeds, threads, step order.
void check_run_settings(const ExperimentSpec& s) {
    require(!s.name.empty(), "name", "must not be empty");
    // The name starts the run folder's name: it must not lead out of --out.
    require(is_safe_path_component(s.name), "name",
            "'" + s.name +
                "' is not a valid run name: use letters, digits and - _ . @ = only (no '/', "
                "no '..', at most 200 characters)");
    require(!s.methods.empty(), "methods", "needs at least one method");
    std::set<std::string> labels;
    for (size_t i = 0; i < s.methods.size(); ++i)
        require(labels.insert(s.methods[i].label).second,
                "methods[" + std::to_string(i) + "].label",
                "duplicate label '" + s.methods[i].label + "' (give each method a unique label)");
    require(s.batch_size > 0, "batch_size",
            "must be positive, got " + std::to_string(s.batch_size));
    require(s.steps > 0, "steps", "must be positive");
    require(!s.seeds.empty(), "seeds", "needs at least one seed");
    std::map<std::uint64_t, size_t> seen_seeds;  // seed → first index
    for (size_t i = 0; i < s.seeds.size(); ++i) {
        const auto [it, fresh] = seen_seeds.emplace(s.seeds[i], i);
        require(fresh, "seeds[" + std::to_string(i) + "]",
                "duplicate seed " + std::to_string(s.seeds[i]) + " (also seeds[" +
                    std::to_string(it->second) + "])");
    }
    require(s.log_every > 0, "log_every", "must be positive");
    require(s.threads > 0, "threads", "must be positive");
    require(s.threads <= max_threads(), "threads",
            "must be at most " + std::to_string(max_threads()) +
                " (the hardware threads of this machine), got " + std::to_string(s.threads));
    require_one_of(s.step_order, {"backbone-first", "w-first"}, "step_order");
    require_one_of(s.device, device_names(), "device");
    require(s.divergence_factor > 1, "divergence_factor", "must be greater than 1");
    require(s.save_state_seconds >= 0 && std::isfinite(s.save_state_seconds), "save_state_seconds",
            "must be a non-negative number of seconds");
    require(s.probe_timeout_seconds > 0 && s.probe_timeout_seconds <= 86400,
            "probe_timeout_seconds", "must be a number of seconds in (0, 86400]");
    // Below 1 GiB of address space a LibTorch process cannot even start its threads.
    require(s.probe_memory_gib == 0 || (s.probe_memory_gib >= 1 && s.probe_memory_gib <= 65536),
            "probe_memory_gib", "must be 0 (half the machine's memory) or between 1 and 65536 GiB");
}

// The built-in ICNN's own settings (icnn.architecture liftlab): refused where nothing reads them.
void check_liftlab_icnn_keys(const ExperimentSpec& s, const TaskKindInfo& kind, bool published) {
    const IcnnSpec defaults;
    const bool cpflow = s.task.kind == "cpflow-toy" || s.task.kind == "cpflow-tabular";
    require(s.icnn.flow_scales || (cpflow && !published), "icnn.flow_scales",
            "is only read by the convex potential flows of icnn.architecture liftlab "
            "(cpflow-toy, cpflow-tabular)");
    const bool builtin = kind.family == TaskFamily::Icnn && !published && s.icnn.script.empty();
    require(builtin || s.icnn.strong_convexity == defaults.strong_convexity,
            "icnn.strong_convexity",
            "is only read by the built-in ICNN (icnn.architecture liftlab, no icnn.script)");
    const bool lifter_keys = kind.family == TaskFamily::Icnn && !published;
    require(lifter_keys || s.icnn.lifter_body == defaults.lifter_body, "icnn.lifter_body",
            "is only read by the lifter of icnn.architecture liftlab");
    require(lifter_keys || s.icnn.lifter_pool_norm == defaults.lifter_pool_norm,
            "icnn.lifter_pool_norm", "is only read by the lifter of icnn.architecture liftlab");
    require(lifter_keys || s.icnn.eval_conditioning == defaults.eval_conditioning,
            "icnn.eval_conditioning",
            "is only read by icnn.architecture liftlab (the published CP-Flow conditions on its "
            "fixed batch)");
    require(!published || !s.task.fresh_samples, "task.fresh_samples",
            "is not read by icnn.architecture cpflow-published (it trains on the n_train split)");
    for (size_t i = 0; i < s.methods.size(); ++i) {
        if (s.methods[i].init_noise == 0) continue;
        const auto& reads = method_info(s.methods[i].name).parameters;
        const std::string key = "methods[" + std::to_string(i) + "].init_noise";
        require(std::find(reads.begin(), reads.end(), "init_noise") != reads.end(), key,
                s.methods[i].name + " has no pre-positivity parameter to perturb");
        require(!published, key, "is only implemented for icnn.architecture liftlab");
    }
}

// The task against its methods, architecture and backbone (the registry's families and flags).
void check_task_fit(const ExperimentSpec& s) {
    const TaskKindInfo& kind = task_kind_info(s.task.kind);
    // (A batch-size sweep replaces batch_size: its values are checked per sub-spec.)
    if (kind.batch_within_n_train && s.sweep.key != "batch_size")
        require(s.batch_size <= s.task.n_train, "batch_size",
                "is larger than task.n_train (" + std::to_string(s.task.n_train) + ")");
    for (size_t i = 0; i < s.methods.size(); ++i) {
        const MethodInfo& method = method_info(s.methods[i].name);
        const std::string key = "methods[" + std::to_string(i) + "].name";
        require(takes_methods(kind.family, method.family), key, family_mismatch(kind, method));
        if (method.cross_entropy)
            require(kind.classification, key,
                    method.name + " needs a classification task (" +
                        task_names([](const TaskKindInfo& t) { return t.classification; }) + ")");
    }
    // The ICNN family's fused Adam kernel, quadrature and diagnostics are CPU code.
    require(s.device != "cuda" || kind.family != TaskFamily::Icnn, "device",
            "cuda is not supported for " + s.task.kind +
                ": the ICNN family runs on cpu only (device auto runs it on cpu)");
    const bool published = s.icnn.architecture == "cpflow-published";
    if (published) {
        require(kind.published_cpflow, "icnn.architecture",
                "cpflow-published needs task.kind " +
                    task_names([](const TaskKindInfo& t) { return t.published_cpflow; }));
        std::vector<std::string> offered;
        for (const auto& m : method_registry())
            if (m.published_cpflow) offered.push_back(m.name);
        for (size_t i = 0; i < s.methods.size(); ++i)
            require_one_of(s.methods[i].name, offered, "methods[" + std::to_string(i) + "].name");
    }
    require(published || s.optimizer.lr_step_every == 0, "optimizer.lr_step_every",
            "is only used with icnn.architecture cpflow-published");
    require(published || !s.icnn.readout_fanin_scale, "icnn.readout_fanin_scale",
            "is only implemented for icnn.architecture cpflow-published");
    require(published || s.icnn.blocks == 1, "icnn.blocks",
            "is only used with icnn.architecture cpflow-published");
    check_liftlab_icnn_keys(s, kind, published);
    if (s.backbone.kind == "torchscript")
        require(kind.family == TaskFamily::LastLayer, "backbone.kind",
                "torchscript backbones train under the backbone + last-layer methods; task.kind " +
                    kind.name + " has none (" + task_names([](const TaskKindInfo& t) {
                        return t.family == TaskFamily::LastLayer;
                    }) +
                    " have)");
    if (!s.icnn.script.empty()) {
        require(kind.family == TaskFamily::Icnn && !published &&
                    (s.task.kind == "icnn-ebm-1d" || s.task.kind == "icnn-ebm-nd"),
                "icnn.script",
                "a TorchScript ICNN is trained on the energy models: task.kind icnn-ebm-1d or "
                "icnn-ebm-nd (icnn.architecture liftlab), not " +
                    s.task.kind);
        for (size_t i = 0; i < s.methods.size(); ++i)
            require(!method_info(s.methods[i].name).wide, "methods[" + std::to_string(i) + "].name",
                    s.methods[i].name +
                        " widens the built-in ICNN; it has no meaning for a TorchScript ICNN");
    }
    const std::string want_backbone = s.backbone.kind == "torchscript" ? s.backbone.kind
                                      : !kind.backbone.empty()         ? kind.backbone
                                      : kind.classification            ? s.backbone.kind
                                                                       : BackboneSpec{}.kind;
    if (!kind.backbone.empty() || s.backbone.kind == "fno1d")
        require(s.backbone.kind == want_backbone, "backbone.kind",
                s.backbone.kind == "fno1d" && kind.backbone.empty()
                    ? std::string("fno1d needs the burgers task")
                    : "task.kind " + kind.name + " needs the " + want_backbone + " backbone");
    if (s.backbone.kind == "cnn")
        require(kind.classification, "backbone.kind", "cnn needs an image classification task");
    if (freezes_backbone(s.backbone)) {
        bool trains_backbone = false;
        for (const auto& m : s.methods) {
            const auto family = method_info(m.name).family;
            trains_backbone = trains_backbone || family == MethodFamily::Gradient ||
                              family == MethodFamily::ClosedForm;
        }
        require(trains_backbone, "backbone.freeze",
                "no method of this spec has a backbone to freeze (task.kind " + kind.name +
                    "; the backbone + last-layer methods have one)");
    }
}

RunEvent parse_run_event(const nlohmann::json& j, const std::string& path) {
    ObjectReader r(j, path);
    RunEvent e;
    for (const char* k : {"step", "method", "key", "value"})
        if (!r.has(k)) throw SpecError(r.key(k), "is required");
    read_fields(r, e);
    r.finish();
    return e;
}

// Events name a method of the spec, a setting it can change, a valid value and a step of the
// run; a fork names its parent and the step it starts from.
void check_events_and_fork(const ExperimentSpec& s) {
    require(s.fork_state_every >= 0, "fork_state_every", "must be non-negative");
    require(s.fork_state_every == 0 || s.save_state, "fork_state_every",
            "needs save_state (the fork states are the resume states kept)");
    for (size_t i = 0; i < s.events.size(); ++i) {
        const auto& e = s.events[i];
        const std::string p = "events[" + std::to_string(i) + "]";
        require(e.step >= 0 && e.step < s.steps, p + ".step",
                "step " + std::to_string(e.step) + " is not in [0, " + std::to_string(s.steps) +
                    "): an event at step N acts on steps N+1…");
        if (e.method == "push") {
            require(e.key == "readout" || e.key == "hidden" || e.key == "all", p + ".key",
                    "a push names the layers readout, hidden or all, got '" + e.key + "'");
            require(e.value > 0 && e.value <= 1, p + ".value",
                    "the fraction pushed must lie in (0, 1]");
            const double logit = std::log(0.05 / 0.95);
            require(std::isfinite(e.depth) && e.depth < logit && e.depth >= -50, p + ".depth",
                    "must lie in [-50, log(0.05/0.95) ≈ -2.944) so that σ(θ̃) < 0.05");
            require(is_icnn_task(s.task.kind) && s.icnn.architecture == "liftlab", p + ".method",
                    "a push needs an ICNN run (icnn-ebm-*, cpflow-*; icnn.architecture liftlab)");
            continue;
        }
        require(e.depth == RunEvent{}.depth, p + ".depth", "only a push has a depth");
        const MethodSpec* m = nullptr;
        std::string labels;
        for (const auto& mm : s.methods) {
            if (mm.label == e.method) m = &mm;
            labels += (labels.empty() ? "" : ", ") + mm.label;
        }
        require(m != nullptr, p + ".method",
                "no method labelled '" + e.method + "' (the spec's: " + labels + ")");
        const auto keys = live_setting_keys(s, *m);
        std::string list;
        for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
        require(std::find(keys.begin(), keys.end(), e.key) != keys.end(), p + ".key",
                "'" + e.key + "' cannot change while " + e.method + " trains" +
                    (list.empty() ? std::string(" (it has no live settings)")
                                  : " (its live settings: " + list + ")"));
        const auto* param = find_method_parameter(e.key);
        require(std::isfinite(e.value), p + ".value", "must be a finite number");
        if (e.key == "lr")
            require(e.value > 0, p + ".value", "a step size must be positive");
        else if (param && param->valid)
            require(param->valid(e.value), p + ".value", param->rule);
    }
    require(s.fork_step >= 0, "fork_step", "must be non-negative");
    if (!s.parent.empty())
        require(s.fork_step < s.steps, "fork_step",
                "the fork starts after step " + std::to_string(s.fork_step) +
                    ": steps must be larger (got " + std::to_string(s.steps) + ")");
    else
        require(s.fork_step == 0, "fork_step", "is only meaningful with a parent");
    require(s.parent.empty() ? s.fork_source.empty() : true, "fork_source",
            "is only meaningful with a parent (a fork: run --fork)");
}

}  // namespace

std::vector<std::string> live_setting_keys(const ExperimentSpec& spec, const MethodSpec& method) {
    const auto& info = method_info(method.name);
    switch (info.family) {
        case MethodFamily::Gradient:
            return {"lr"};
        case MethodFamily::ClosedForm: {
            std::vector<std::string> keys = {"lr"};
            const auto has = [&](const char* k) {
                return std::find(info.parameters.begin(), info.parameters.end(), k) !=
                       info.parameters.end();
            };
            if (has("rho"))
                keys.push_back("rho");  // its λ is the initial precision A₀ = λI: fixed
            else if (has("lambda"))
                keys.push_back("lambda");
            if (has("beta")) keys.push_back("beta");
            return keys;
        }
        case MethodFamily::Positivity:
            if (spec.icnn.architecture == "cpflow-published") return {};
            return {"lr"};
        case MethodFamily::Dfiv:
            return {};
    }
    return {};
}

RunEvent parse_event_text(const std::string& text) {
    auto bad = [&](const std::string& what) {
        throw SpecError("--event", "'" + text + "': " + what +
                                       " (expected STEP:LABEL.KEY=VALUE, e.g. "
                                       "1500:cf-prox.lambda=10)");
    };
    RunEvent e;
    const auto colon = text.find(':');
    if (colon == std::string::npos) bad("no ':' after the step");
    long long step = 0;
    if (!c_parse_int(std::string_view(text).substr(0, colon), 0, 2147483647LL, &step))
        bad("the step '" + text.substr(0, colon) + "' is not a non-negative integer");
    e.step = static_cast<int>(step);
    const std::string rest = text.substr(colon + 1);
    const auto eq = rest.find('=');
    if (eq == std::string::npos) bad("no '=' before the value");
    const std::string target = rest.substr(0, eq);
    const auto dot = target.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == target.size())
        bad("'" + target + "' is not LABEL.KEY");
    e.method = target.substr(0, dot);
    e.key = target.substr(dot + 1);
    std::string value = rest.substr(eq + 1);
    // A push may add its depth: 1000:push.readout=0.33,depth=-4
    if (const auto comma = value.find(','); comma != std::string::npos && e.method == "push") {
        const std::string extra = value.substr(comma + 1);
        value = value.substr(0, comma);
        if (extra.rfind("depth=", 0) != 0 || !c_parse_double(extra.substr(6), &e.depth))
            bad("after the fraction a push takes only ',depth=NUMBER', got '" + extra + "'");
    }
    if (!c_parse_double(value, &e.value) || !std::isfinite(e.value))
        bad("the value '" + value + "' is not a finite number");
    return e;
}

nlohmann::json to_json(const RunEvent& e) {
    nlohmann::json j = nlohmann::json::object();
    visit_fields(e, [&j](const char* k, const auto& member, const char*) { j[k] = member; });
    if (e.method != "push") j.erase("depth");  // only a push has a depth
    return j;
}

namespace {

// Reads a sub-struct of the spec by its own parse_* (`check` false: types only).
template <typename M>
M parse_section(const nlohmann::json& j, bool check) {
    if constexpr (std::is_same_v<M, TaskSpec>) return parse_task(j, check);
    if constexpr (std::is_same_v<M, BackboneSpec>) return parse_backbone(j, check);
    if constexpr (std::is_same_v<M, OptimizerSpec>) return parse_optimizer(j, check);
    if constexpr (std::is_same_v<M, IcnnSpec>) return parse_icnn(j, check);
    if constexpr (std::is_same_v<M, SweepSpec>) return parse_sweep(j, check);
    if constexpr (std::is_same_v<M, DiagnosticsSpec>) return parse_diagnostics(j, check);
}

// A run folder's spec.json records these beside the spec; they do not change the run, so
// `liftlab-cli run RUN/spec.json` repeats it (in one process, unsharded).
void read_recorded_keys(ObjectReader& r) {
    for (const char* recorded : {"versions", "data", "schema_version", "world_size", "shard",
                                 "merged_from", "device_used", "backbone_freeze"})
        if (r.has(recorded)) r.raw(recorded);
    // A spec of a later LiftLab may mean something this build does not know.
    if (r.has("schema_version")) {
        const auto& v = r.raw("schema_version");
        require(v.is_number_integer() && v.get<long long>() >= 1 &&
                    v.get<long long>() <= kSpecSchemaVersion,
                "schema_version",
                "this LiftLab reads schema versions 1 to " + std::to_string(kSpecSchemaVersion) +
                    ", got " + v.dump() + " (written by a newer LiftLab?)");
    }
}

// The fields of visit_fields(ExperimentSpec) in its order, the methods after icnn, the recorded
// keys before the sweep, the events last (the order of the errors when several keys are wrong).
ExperimentSpec read_spec(const nlohmann::json& j, bool check) {
    ExperimentSpec s;
    ObjectReader r(j, "");
    visit_fields(s, [&](const char* k, auto& member, const char*) {
        using M = std::decay_t<decltype(member)>;
        if constexpr (std::is_same_v<M, SweepSpec>) read_recorded_keys(r);
        if constexpr (is_spec_section_v<M>) {
            if (r.has(k)) member = parse_section<M>(r.raw(k), check);
        } else {
            r.read(k, member);
        }
        if constexpr (std::is_same_v<M, IcnnSpec>) {
            if (r.has("methods")) {
                const auto& arr = r.raw("methods");
                if (!arr.is_array())
                    throw SpecError("methods", "expected an array, got " + describe(arr));
                for (size_t i = 0; i < arr.size(); ++i)
                    s.methods.push_back(
                        parse_method(arr[i], "methods[" + std::to_string(i) + "]", check));
            }
        }
    });
    if (r.has("events")) {
        const auto& arr = r.raw("events");
        if (!arr.is_array()) throw SpecError("events", "expected an array, got " + describe(arr));
        for (size_t i = 0; i < arr.size(); ++i)
            s.events.push_back(parse_run_event(arr[i], "events[" + std::to_string(i) + "]"));
    }
    // A run folder's record of the events sent in while it ran (the window; RunStore::
    // record_live_events): they are events like the others, after them.
    if (r.has("live_events")) {
        const auto& arr = r.raw("live_events");
        if (!arr.is_array())
            throw SpecError("live_events", "expected an array, got " + describe(arr));
        for (size_t i = 0; i < arr.size(); ++i)
            s.events.push_back(parse_run_event(arr[i], "live_events[" + std::to_string(i) + "]"));
    }
    r.finish();
    return s;
}

}  // namespace

ExperimentSpec read_spec_fields(const nlohmann::json& j) {
    return read_spec(j, false);
}

ExperimentSpec parse_spec(const nlohmann::json& j) {
    ExperimentSpec s = read_spec(j, true);

    check_run_settings(s);
    check_task_fit(s);
    check_events_and_fork(s);
    if (!s.sweep.key.empty()) {
        // Every swept value must give a valid spec: check now, not halfway through the run.
        expand_sweep(s);
    }
    return s;
}

namespace {

// The fields visit_fields lists for `s` (sub-structs as objects), and backbone.freeze.
template <typename S>
nlohmann::json fields_json(const S& s) {
    nlohmann::json j = nlohmann::json::object();
    visit_fields(s, [&j](const char* k, const auto& member, const char*) {
        using M = std::decay_t<decltype(member)>;
        if constexpr (is_spec_section_v<M>)
            j[k] = fields_json(member);
        else
            j[k] = member;
    });
    if constexpr (std::is_same_v<S, BackboneSpec>) j["freeze"] = freeze_json(s);
    return j;
}

}  // namespace

nlohmann::json to_json(const ExperimentSpec& s) {
    nlohmann::json j = fields_json(s);
    j["schema_version"] = kSpecSchemaVersion;
    nlohmann::json& methods = j["methods"] = nlohmann::json::array();
    for (const auto& m : s.methods) {
        nlohmann::json method = {{"name", m.name}, {"label", m.label}};
        for (const auto& p : method_parameters())
            method[p.key] = p.real ? nlohmann::json(m.*p.real) : nlohmann::json(m.*p.integer);
        methods.push_back(method);
    }
    nlohmann::json& events = j["events"] = nlohmann::json::array();
    for (const auto& e : s.events) events.push_back(to_json(e));
    return j;
}

namespace {

template <typename S>
void collect_field_rows(const S& s, const std::string& prefix, std::vector<SpecFieldRow>& out) {
    visit_fields(s, [&](const char* k, const auto& member, const char* doc) {
        using M = std::decay_t<decltype(member)>;
        if constexpr (is_spec_section_v<M>)
            collect_field_rows(member, prefix + k + ".", out);
        else
            out.push_back({prefix + k, doc, nlohmann::json(member)});
    });
    if constexpr (std::is_same_v<S, BackboneSpec>)
        out.push_back({prefix + "freeze",
                       "parameters kept fixed: false, true, a list of names or a regular "
                       "expression",
                       freeze_json(s)});
}

}  // namespace

const std::vector<SpecFieldRow>& spec_field_rows() {
    static const std::vector<SpecFieldRow> rows = [] {
        std::vector<SpecFieldRow> out;
        collect_field_rows(ExperimentSpec{}, "", out);
        out.push_back({"events", "live-setting changes: [{step, method, key, value}, …]",
                       nlohmann::json::array()});
        return out;
    }();
    return rows;
}

bool samples_its_target(const TaskSpec& task) {
    const auto* kind = find_task_kind(task.kind);
    if (!kind) return false;
    const auto& sampled = kind->sampled_targets;
    return std::find(sampled.begin(), sampled.end(), task.target) != sampled.end();
}

bool freezes_backbone(const BackboneSpec& b) {
    return b.freeze_all || !b.freeze_names.empty() || !b.freeze_regex.empty();
}

bool is_icnn_task(const std::string& kind) {
    const auto* t = find_task_kind(kind);
    return t && t->family == TaskFamily::Icnn;
}

bool is_positivity_method(const std::string& name) {
    const auto* m = find_method(name);
    return m && m->family == MethodFamily::Positivity;
}

std::vector<std::pair<std::string, ExperimentSpec>> expand_sweep(const ExperimentSpec& spec) {
    if (spec.sweep.key.empty()) return {{"", spec}};
    std::vector<std::pair<std::string, ExperimentSpec>> out;
    for (const auto& v : spec.sweep.values) {
        nlohmann::json j = to_json(spec);
        j["sweep"] = {{"key", ""}, {"values", nlohmann::json::array()}};
        try {
            apply_override(j, spec.sweep.key + "=" +
                                  v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        } catch (const SpecError& e) {
            throw SpecError("sweep.key", e.what());
        }
        ExperimentSpec sub;
        try {
            sub = parse_spec(j);
        } catch (const SpecError& e) {
            throw SpecError("sweep.values",
                            "value " +
                                v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                " gives an invalid spec: " + e.what());
        }
        std::string text = v.is_string()
                               ? v.get<std::string>()
                               : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        const auto dot = spec.sweep.key.rfind('.');
        const std::string short_key =
            dot == std::string::npos ? spec.sweep.key : spec.sweep.key.substr(dot + 1);
        std::replace(text.begin(), text.end(), ',', ' ');  // labels live in a CSV column
        out.emplace_back("@" + short_key + "=" + text, std::move(sub));
    }
    return out;
}

void select_methods(nlohmann::json& spec, const std::string& names) {
    auto refuse = [](const std::string& what) {
        throw std::invalid_argument("--methods: " + what);
    };
    if (!spec.is_object()) throw SpecError("<root>", "expected an object");
    const nlohmann::json present = spec.contains("methods") && spec["methods"].is_array()
                                       ? spec["methods"]
                                       : nlohmann::json::array();
    auto field = [](const nlohmann::json& m, const char* k) {
        return m.is_object() && m.contains(k) && m[k].is_string() ? m[k].get<std::string>()
                                                                  : std::string();
    };
    // The valid names: the spec's labels, then the registered methods its task takes.
    std::vector<std::string> valid;
    for (const auto& m : present) {
        const std::string label = field(m, "label").empty() ? field(m, "name") : field(m, "label");
        if (!label.empty() && std::find(valid.begin(), valid.end(), label) == valid.end())
            valid.push_back(label);
    }
    const std::string kind = spec.contains("task") ? field(spec["task"], "kind") : std::string();
    const auto* task = find_task_kind(kind.empty() ? TaskSpec{}.kind : kind);
    for (const auto& info : method_registry())
        if ((!task || (takes_methods(task->family, info.family) &&
                       (!info.cross_entropy || task->classification))) &&
            std::find(valid.begin(), valid.end(), info.name) == valid.end())
            valid.push_back(info.name);
    std::string valid_text;
    for (const auto& v : valid) valid_text += (valid_text.empty() ? "" : ", ") + v;

    nlohmann::json chosen = nlohmann::json::array();
    std::vector<std::string> seen;
    size_t start = 0;
    while (start <= names.size()) {
        size_t comma = names.find(',', start);
        if (comma == std::string::npos) comma = names.size();
        std::string name = names.substr(start, comma - start);
        start = comma + 1;
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        if (name.empty()) {
            if (names.find_first_not_of(" \t,") == std::string::npos)
                refuse("needs at least one method (valid: " + valid_text + ")");
            continue;  // "adam,,cf-prox" or a trailing comma
        }
        if (std::find(seen.begin(), seen.end(), name) != seen.end())
            refuse("names '" + name + "' twice");
        seen.push_back(name);
        // A label of the spec first, then every method of the spec with that name.
        bool found = false;
        for (const auto& m : present)
            if (field(m, "label") == name) {
                chosen.push_back(m);
                found = true;
            }
        if (!found)
            for (const auto& m : present)
                if (field(m, "label").empty() && field(m, "name") == name) {
                    chosen.push_back(m);
                    found = true;
                }
        if (!found && find_method(name)) {
            chosen.push_back({{"name", name}});
            found = true;
        }
        if (!found)
            refuse("'" + name + "' is neither a method of " +
                   (field(spec, "name").empty() ? std::string("the spec") : field(spec, "name")) +
                   " nor a registered method (valid: " + valid_text + ")");
    }
    spec["methods"] = chosen;
}

void apply_override(nlohmann::json& spec, const std::string& assignment) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw SpecError(assignment, "an override must look like key=value");
    std::string path = assignment.substr(0, eq);
    if (path == "target") path = "task.target";  // `--set target=laplace` (ICNN presets)
    const std::string text = assignment.substr(eq + 1);
    try {
        check_json_depth(text, "--set " + path);
    } catch (const DataError&) {
        throw SpecError(path, "value nested deeper than " + std::to_string(kMaxJsonDepth) +
                                  " levels (refused)");
    }
    nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) {
        // Not JSON: a plain string — unless it looks like a number JSON cannot hold (1e400).
        const bool numeric_looking =
            !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) ||
                              (text[0] == '-' && text.size() > 1 &&
                               std::isdigit(static_cast<unsigned char>(text[1]))));
        double parsed = 0;
        bool huge = false;
        if (numeric_looking && !c_parse_double(text, &parsed, &huge) && huge)
            throw SpecError(path, "'" + text + "' is out of the range of a double");
        value = text;
    }

    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        size_t dot = path.find('.', start);
        parts.push_back(path.substr(start, dot == std::string::npos ? dot : dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    nlohmann::json* node = &spec;
    std::string walked;
    for (size_t i = 0; i < parts.size(); ++i) {
        const std::string& part = parts[i];
        if (part.empty()) throw SpecError(path, "empty component in key");
        const bool last = i + 1 == parts.size();
        walked += (walked.empty() ? "" : ".") + part;
        if (node->is_array()) {
            nlohmann::json* next = nullptr;
            const bool numeric = std::all_of(part.begin(), part.end(), ::isdigit);
            if (numeric) {
                std::uint64_t idx = 0;
                if (!c_parse_uint64(part, &idx) || idx >= node->size())
                    throw SpecError(
                        walked, "index out of range (size " + std::to_string(node->size()) + ")");
                next = &(*node)[idx];
            } else {
                for (auto& el : *node) {
                    const bool match =
                        el.is_object() &&
                        ((el.contains("label") && el["label"] == part) ||
                         (!el.contains("label") && el.contains("name") && el["name"] == part));
                    if (match) next = &el;
                }
                if (!next) throw SpecError(walked, "no element with label '" + part + "'");
            }
            if (last) *next = value;
            node = next;
        } else if (node->is_object()) {
            if (last) {
                (*node)[part] = value;  // an unknown key is then reported by parse_spec
            } else {
                if (!node->contains(part)) (*node)[part] = nlohmann::json::object();
                node = &(*node)[part];
            }
        } else {
            throw SpecError(walked, "cannot descend into a " + std::string(node->type_name()));
        }
    }
}

namespace {

// Removes from `j` every key the template `t` does not have (objects recursively; each element
// of an array of objects against the template's first element). Returns the dotted keys removed.
void drop_unknown_keys(nlohmann::json& j, const nlohmann::json& t, const std::string& path,
                       std::vector<std::string>* dropped) {
    if (!j.is_object() || !t.is_object()) return;
    for (auto it = j.begin(); it != j.end();) {
        const std::string key = path.empty() ? it.key() : path + "." + it.key();
        if (!t.contains(it.key())) {
            dropped->push_back(key);
            it = j.erase(it);
            continue;
        }
        const auto& sub = t.at(it.key());
        if (it->is_object()) drop_unknown_keys(*it, sub, key, dropped);
        if (it->is_array() && sub.is_array() && !sub.empty())
            for (auto& el : *it) drop_unknown_keys(el, sub.front(), key + "[]", dropped);
        ++it;
    }
}

}  // namespace

ExperimentSpec parse_recorded_spec(nlohmann::json j, std::vector<std::string>* dropped) {
    std::vector<std::string> local;
    if (!dropped) dropped = &local;
    int version = 1;
    if (j.is_object() && j.contains("schema_version")) {
        const auto& v = j["schema_version"];
        if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
            throw SpecError("schema_version", "expected a positive integer, got " + describe(v));
        if (v.get<std::int64_t>() > kSpecSchemaVersion)
            throw SpecError("schema_version",
                            "this run folder was written by a newer LiftLab (schema " +
                                v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                ", this build reads up to " + std::to_string(kSpecSchemaVersion) +
                                ")");
        version = static_cast<int>(v.get<std::int64_t>());
    }
    if (version < kSpecSchemaVersion && j.is_object()) {
        // Folders of earlier versions: keys since removed are ignored, keys since added take
        // their defaults (the resolved spec of such a folder lists every key it knew).
        ExperimentSpec defaults;
        MethodSpec method;
        method.name = method_registry().front().name;
        defaults.methods = {method};
        auto t = to_json(defaults);
        t["versions"] = nlohmann::json::object();
        t["data"] = nlohmann::json::object();
        drop_unknown_keys(j, t, "", dropped);
    }
    return parse_spec(j);
}

int max_threads() {
    // Never below 2: the presets use up to 2 threads and must run on a single-core machine too.
    return static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
}

}  // namespace liftlab
