// One declaration per spec field. Each spec struct's `visit_fields` names every plain field once,
// as f(json key, member, doc), in the order parse_spec reads them; parse_spec, to_json, the
// all-fields round-trip test (tests/engine/test_spec_fields.cpp) and the window's "All settings"
// table walk it. A member's default is its initialiser in experiment_spec.h; its checks (ranges,
// names, the fields it needs) stay in experiment_spec.cpp.
//
// Not listed (explicit special cases in experiment_spec.cpp): backbone.freeze (one key for
// freeze_all / freeze_names / freeze_regex), ExperimentSpec::methods (MethodParameter table),
// ExperimentSpec::events (a list of RunEvent, whose own fields are listed), and the keys a run
// folder's spec.json records beside the spec (versions, data, schema_version, shard, …).
// ExperimentSpec's visitor also hands over its sub-structs (task, backbone, …, sweep,
// diagnostics) as members, so that one list gives the order of the whole spec.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "spec/experiment_spec.h"

namespace liftlab {

template <class T, class S>
using if_fields_of = std::enable_if_t<std::is_same_v<std::remove_const_t<T>, S>>;

template <class T, class F>
if_fields_of<T, TaskSpec> visit_fields(T& t, F&& f) {
    f("kind", t.kind, "the task (teacher-regression, csv-regression, burgers, …)");
    f("input_dim", t.input_dim, "teacher-regression: input dimension");
    f("output_dim", t.output_dim, "teacher-regression: output dimension (class-mixture: classes)");
    f("teacher_hidden", t.teacher_hidden, "teacher-regression: the teacher MLP's widths");
    f("noise", t.noise, "std of the Gaussian noise on the teacher's outputs");
    f("n_train", t.n_train, "training samples (classification: a cap, 0 = all)");
    f("n_test", t.n_test, "test samples (classification: a cap, 0 = all)");
    f("csv_path", t.csv_path, "csv-regression, cpflow-tabular, target csv: the table");
    f("target_columns", t.target_columns, "csv-regression: target columns (empty: the last)");
    f("test_fraction", t.test_fraction, "csv-regression: share of rows held out for test");
    f("standardize", t.standardize, "z-score inputs and targets with training statistics");
    f("data_seed", t.data_seed, "seed of the data and its split (not of the training)");
    f("resolution", t.resolution, "burgers: grid points the model sees");
    f("fine_grid", t.fine_grid, "burgers: grid of the pseudo-spectral solver");
    f("viscosity", t.viscosity, "burgers: viscosity ν");
    f("final_time", t.final_time, "burgers: final time T");
    f("cache_dir", t.cache_dir, "generated data cache (empty: the user's cache folder)");
    f("data_dir", t.data_dir, "fashion-mnist: folder of the data set");
    f("train_files", t.train_files, "cifar-binary: training record files");
    f("test_files", t.test_files, "cifar-binary: test record files");
    f("label_bytes", t.label_bytes, "cifar-binary: 1 (CIFAR-10) or 2 (CIFAR-100)");
    f("label_index", t.label_index, "cifar-binary: which label byte is the class");
    f("rho", t.rho, "dfiv-demand: confounding strength ρ");
    f("target", t.target, "ICNN family: the density or data set");
    f("dim", t.dim, "icnn-ebm-nd: dimension");
    f("latent_steps", t.latent_steps, "fmnist-latents: autoencoder training steps");
    f("fresh_samples", t.fresh_samples,
      "draw every training batch fresh from the target (default where it can be sampled)");
    f("test_per_seed", t.test_per_seed, "with fresh_samples: each seed draws its own test set");
    f("split", t.split, "the scored split: test or validation");
    f("validation_fraction", t.validation_fraction,
      "split validation: share of training rows held out");
}

// backbone.freeze is read and written beside these (freeze_all / freeze_names / freeze_regex).
template <class T, class F>
if_fields_of<T, BackboneSpec> visit_fields(T& b, F&& f) {
    f("kind", b.kind, "mlp, fno1d, cnn or torchscript");
    f("hidden", b.hidden, "mlp: hidden widths");
    f("feature_dim", b.feature_dim, "d: width of the features fed to the last layer");
    f("activation", b.activation, "tanh, relu or gelu");
    f("modes", b.modes, "fno1d: Fourier modes kept");
    f("width", b.width, "fno1d: lifted width");
    f("layers", b.layers, "fno1d: Fourier layers");
    f("channels", b.channels, "cnn: channels of the conv blocks");
    f("script", b.script, "torchscript: the user's TorchScript file");
    f("init", b.init, "torchscript: file (its weights) or reset (drawn from the seed)");
    f("script_sha256", b.script_sha256, "torchscript: the file's SHA-256 (checked when given)");
}

template <class T, class F>
if_fields_of<T, IcnnSpec> visit_fields(T& c, F&& f) {
    f("width", c.width, "ICNN hidden width");
    f("layers", c.layers, "ICNN depth");
    f("grad_clip", c.grad_clip, "global gradient-norm clip (0: off)");
    f("reference_size", c.reference_size, "training samples the lifter's body reads");
    f("eval_conditioning", c.eval_conditioning,
      "what the lifter's body reads when scoring: reference or scored");
    f("strong_convexity", c.strong_convexity, "c of the built-in ICNN's (c/2)||x||²");
    f("lifter_body", c.lifter_body, "the lifter's per-sample MLP widths");
    f("lifter_pool_norm", c.lifter_pool_norm, "standardise the lifter's pooled code");
    f("flow_scales", c.flow_scales, "cpflow: learned softplus scales around the ICNN");
    f("quadrature_points", c.quadrature_points, "icnn-ebm-1d: grid of the reported log Z and TV");
    f("train_quadrature_points", c.train_quadrature_points,
      "icnn-ebm-1d: Gauss–Legendre nodes of the training log Z (0: the trapezoid grid)");
    f("is_samples", c.is_samples, "icnn-ebm-nd: proposal samples per training step");
    f("eval_is_samples", c.eval_is_samples, "icnn-ebm-nd: proposal samples at evaluation");
    f("proposal", c.proposal, "icnn-ebm-nd: flow, gaussian or student-t");
    f("proposal_dof", c.proposal_dof, "student-t proposal: degrees of freedom");
    f("proposal_inflate", c.proposal_inflate, "widening of the proposal");
    f("flow_layers", c.flow_layers, "flow proposal: coupling layers");
    f("flow_hidden", c.flow_hidden, "flow proposal: width of each coupling MLP");
    f("flow_fit_steps", c.flow_fit_steps, "flow proposal: Adam steps of the data fit");
    f("flow_refine_steps", c.flow_refine_steps,
      "flow proposal: reverse-KL steps toward the EBM per training step (0: none)");
    f("flow_refine_lr", c.flow_refine_lr, "flow proposal: step size of that refinement");
    f("proposal_adapt_steps", c.proposal_adapt_steps,
      "flow proposal adapted to the EBM at every evaluation: at most this many steps (0: off)");
    f("proposal_adapt_batch", c.proposal_adapt_batch, "adapted proposal: batch");
    f("proposal_adapt_lr", c.proposal_adapt_lr, "adapted proposal: step size");
    f("proposal_adapt_target_ess", c.proposal_adapt_target_ess,
      "adapted proposal: stop at this ESS fraction");
    f("proposal_defensive_weight", c.proposal_defensive_weight,
      "adapted proposal: weight w of the wide defensive component");
    f("proposal_defensive_inflate", c.proposal_defensive_inflate,
      "adapted proposal: variance of the defensive component");
    f("proposal_adapt_train", c.proposal_adapt_train,
      "also draw the training samples from the adapted proposal");
    f("architecture", c.architecture, "cpflow-toy: liftlab or cpflow-published");
    f("readout_fanin_scale", c.readout_fanin_scale,
      "cpflow-published lifter: the reference's readout scaling (Θ_E h)/d_h");
    f("blocks", c.blocks, "cpflow-published: convex blocks");
    f("script", c.script, "a user's TorchScript ICNN (icnn-ebm-1d / -nd)");
    f("constrained", c.constrained, "icnn.script: names of its non-negative parameters");
    f("constrained_regex", c.constrained_regex,
      "icnn.script: regular expression of its non-negative parameters");
    f("init", c.init, "icnn.script: file (its values) or reset (the built-in init)");
    f("script_sha256", c.script_sha256, "icnn.script: the file's SHA-256 (checked when given)");
}

template <class T, class F>
if_fields_of<T, OptimizerSpec> visit_fields(T& o, F&& f) {
    f("kind", o.kind, "sgd or adam");
    f("lr", o.lr, "step size");
    f("momentum", o.momentum, "sgd: momentum");
    f("lr_step_every", o.lr_step_every, "cpflow-published: halve-every steps (0: constant)");
    f("lr_step_gamma", o.lr_step_gamma, "cpflow-published: factor of each step decay");
}

template <class T, class F>
if_fields_of<T, SweepSpec> visit_fields(T& w, F&& f) {
    f("key", w.key, "the swept spec key (dotted; empty: no sweep)");
    f("values", w.values, "its values, one whole comparison each");
}

template <class T, class F>
if_fields_of<T, DiagnosticsSpec> visit_fields(T& d, F&& f) {
    f("spectrum_every", d.spectrum_every, "feature singular values every N steps (0: off)");
    f("probe_size", d.probe_size, "held-out samples in the probe set");
    f("one_step_every", d.one_step_every, "one-step gain every N steps (0: off)");
    f("train_set_loss", d.train_set_loss, "also the whole training set's loss at log points");
    f("shoulder_every", d.shoulder_every, "ICNN: observe the shoulder every N steps (0: off)");
    f("trace_coordinates", d.trace_coordinates, "ICNN: θ̃ coordinates traced");
    f("jacobian_batches", d.jacobian_batches, "ICNN: probe batches for σ²_Jac (0: off)");
    f("permutations", d.permutations, "ICNN: shuffles of the σ²_Jac permutation test");
    f("checkpoint_every", d.checkpoint_every, "ICNN: trajectory checkpoints for landscapes");
}

// depth is written for a push only.
template <class T, class F>
if_fields_of<T, RunEvent> visit_fields(T& e, F&& f) {
    f("step", e.step, "after this step");
    f("method", e.method, "the method's label, or push");
    f("key", e.key, "the live setting (push: readout, hidden or all)");
    f("value", e.value, "its new value (push: the fraction pushed)");
    f("depth", e.depth, "push: θ̃ of the pushed coordinates");
}

// Sub-structs come as members in the order they are read; methods, events and the recorded keys
// are read beside these (experiment_spec.cpp).
template <class T, class F>
if_fields_of<T, ExperimentSpec> visit_fields(T& s, F&& f) {
    f("name", s.name, "the run's name (starts its folder's name)");
    f("description", s.description, "free text");
    f("task", s.task, "the data");
    f("backbone", s.backbone, "the feature network of the closed-form family");
    f("optimizer", s.optimizer, "the backbone's (or the ICNN's) optimizer");
    f("icnn", s.icnn, "the ICNN family's network and loss");
    f("batch_size", s.batch_size, "samples per step");
    f("steps", s.steps, "training steps");
    f("seeds", s.seeds, "training seeds (one unit each)");
    f("log_every", s.log_every, "test metrics every N steps");
    f("log_initial", s.log_initial, "also log the untrained models at step 0");
    f("threads", s.threads, "LibTorch intra-op threads");
    f("device", s.device, "cpu, cuda or auto");
    f("step_order", s.step_order, "backbone-first or w-first");
    f("divergence_factor", s.divergence_factor,
      "stop a method once its loss exceeds this multiple of its first");
    f("export_models", s.export_models, "write each trained model as TorchScript");
    f("save_state", s.save_state, "save every unit's state (resumable runs)");
    f("save_state_seconds", s.save_state_seconds, "at most one saved state per this many seconds");
    f("probe_timeout_seconds", s.probe_timeout_seconds,
      "a TorchScript model's check is stopped after this many seconds");
    f("probe_memory_gib", s.probe_memory_gib,
      "address space of that check in GiB (0: half the machine's memory)");
    f("sweep", s.sweep, "runs the comparison once per value of one key");
    f("diagnostics", s.diagnostics, "what else is observed while training");
    f("fork_state_every", s.fork_state_every, "keep every k-th log point's state for forks");
    f("parent", s.parent, "a forked run: its parent run folder");
    f("fork_step", s.fork_step, "a forked run: the parent's step it starts from");
    f("fork_source", s.fork_source,
      "a forked run: the parent's method a method it did not run starts from");
}

// Whether a member is a sub-struct with its own visit_fields.
template <class M>
constexpr bool is_spec_section_v =
    std::is_same_v<M, TaskSpec> || std::is_same_v<M, BackboneSpec> || std::is_same_v<M, IcnnSpec> ||
    std::is_same_v<M, OptimizerSpec> || std::is_same_v<M, SweepSpec> ||
    std::is_same_v<M, DiagnosticsSpec>;

// One row of the window's "All settings" table: a dotted key, its doc and its default (the
// member's initialiser as JSON). Every leaf of visit_fields(ExperimentSpec), sections expanded,
// plus backbone.freeze and events, in the list's order.
struct SpecFieldRow {
    std::string key;
    std::string doc;
    nlohmann::json default_value;
};
const std::vector<SpecFieldRow>& spec_field_rows();

// The spec's fields read from JSON with their types checked (wrong types and unknown keys are
// SpecErrors as in parse_spec) but none of parse_spec's value checks: ranges, names, fields that
// need each other. For the all-fields round-trip test, whose values need not make a runnable spec.
ExperimentSpec read_spec_fields(const nlohmann::json& j);

}  // namespace liftlab
