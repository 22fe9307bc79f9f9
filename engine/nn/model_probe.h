// A user's TorchScript file is untrusted: loading it, checking it and its probe forward pass run
// in a child process (core/child_process.h) under a time limit (spec probe_timeout_seconds,
// default 60 s) and an address-space limit (probe_memory_gib, default half the machine's memory).
// A crash, a hang or an exhausted memory inside LibTorch then becomes a SpecError naming the file
// and what happened, and the calling process is never at risk. The TorchScript reader's own
// checks (nn/torchscript_module.h) still come first, inside the child. Training then loads the
// checked file (same SHA-256) in-process.
//
// The child is this same executable started as `<exe> probe-model REQUEST_DIR`: every program
// that runs experiments calls run_model_probe_if_asked first thing in main() (liftlab-cli,
// liftlab, the test programs). Torch-free header (the window includes it).
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nn/torchscript_inspect.h"

namespace liftlab {

struct ExperimentSpec;
struct Dataset;

struct ModelProbeLimits {
    double timeout_seconds = 60;  // load + checks + forward
    double memory_gib = 0;        // address space of the child; 0: default_probe_memory_gib()
};

// Half the machine's physical memory, at least 2 GiB (4 GiB when it cannot be read).
double default_probe_memory_gib();
// The limits a spec asks for (probe_timeout_seconds, probe_memory_gib).
ModelProbeLimits probe_limits(const ExperimentSpec& spec);

// The stop flag was raised while the child ran; it has been ended.
class ModelProbeCancelled : public std::runtime_error {
public:
    ModelProbeCancelled() : std::runtime_error("model check stopped") {}
};

// load_torchscript_backbone(spec.backbone, data) (init "file") in a child: throws what it throws
// (SpecError on "backbone.script" or "backbone.script_sha256", same words), or a SpecError on
// "backbone.script" for a crash, a hang or memory. Returns the file's SHA-256.
std::string check_backbone_in_child(const ExperimentSpec& spec, const Dataset& data,
                                    const std::atomic<bool>* stop = nullptr);
// TorchScriptIcnn::load(spec.icnn, d, x) on the first ≤ 4 training rows x (n × d) in a child.
std::string check_icnn_in_child(const ExperimentSpec& spec, const Dataset& data,
                                const std::atomic<bool>* stop = nullptr);
// inspect_torchscript(path, key) in a child (the window's model box).
std::vector<TorchScriptParameterInfo> inspect_torchscript_in_child(
    const std::string& path, const std::string& key, const ModelProbeLimits& limits = {},
    const std::atomic<bool>* stop = nullptr);

// The child's side: when argv is `<exe> probe-model …`, runs the request and returns the exit
// code for main() to return; otherwise nothing. No Qt, no re-exec, nothing else may run first.
std::optional<int> run_model_probe_if_asked(int argc, char** argv);

}  // namespace liftlab
