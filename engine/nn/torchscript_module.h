// A user's TorchScript model (`torch.jit.script(model).save(path)` in PyTorch), loaded and checked
// for the lab: a regular file holding a TorchScript archive with a forward method and at least one
// parameter. Its parameters are addressed by their dotted names ("layer0.weight"), which is how
// the ICNN family names the constrained ones and how the lifter swaps emitted tensors in.
//
// The reader in parts, each with its own tests: the zip container (nn/torchscript_archive.h), the
// pickle and code checks (nn/torchscript_pickle_check.h, nn/torchscript_code_check.h), the checks
// of a file before LibTorch reads it (nn/torchscript_archive_check.h), the checks of the loaded
// module's tensors (nn/torchscript_tensor_check.h), and here the LibTorch wrapper.
#pragma once
#include <torch/script.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nn/torchscript_archive_check.h"  // check_torchscript_archive, kMaxTorchScriptBytes

namespace liftlab {

// What load_torchscript and torchscript_forward are doing (core/activity.h): the model probe's
// child reports them as its phase (training/model_probe.h), Ctrl-C names them.
constexpr const char* kTorchScriptLoadActivity = "loading the TorchScript file";
constexpr const char* kTorchScriptForwardActivity = "the forward pass of a TorchScript model";

struct LoadedTorchScript {
    torch::jit::Module module;
    std::string sha256;  // of the file's bytes
};

// Loads `path`, converted to float32. Throws SpecError(key, "<path>: what is wrong") when the file
// is missing or not regular, is not a TorchScript archive, has no forward method or no parameter.
// With `expected_sha256`, bytes with another SHA-256 are refused (SpecError on key + "_sha256")
// before LibTorch reads them: a file checked in the model probe's child (training/model_probe.h)
// and replaced since is never loaded in-process.
LoadedTorchScript load_torchscript(const std::string& path, const std::string& key,
                                   const std::string& expected_sha256 = "");

// forward(x) of `module`, run op by op (the graph executor's fusions and autodiff subgraphs off,
// so the numbers are those of the same operations in eager code). What forward returns: a
// tensor; of a tuple or list, its first element (the "(output, extras)" convention of
// nn.LSTM, nn.MultiheadAttention and many users' models); of a dict, the entry `dict_key`
// ("features" for a backbone, "energy" for an ICNN). Throws std::runtime_error when forward
// throws or returns anything else. `selector`, when given, receives the TorchScript expression
// that picks the tensor from forward's value ("", "[0]" or "[\"features\"]").
torch::Tensor torchscript_forward(torch::jit::Module& module, const torch::Tensor& x,
                                  const std::string& dict_key = "features",
                                  std::string* selector = nullptr);

// Every parameter, with its dotted name, in the module's registration order (recursively).
std::vector<std::pair<std::string, torch::Tensor>> torchscript_parameters(
    const torch::jit::Module& module);

// Replaces the parameter `dotted_name` by `value` (autograd history kept: forward then reads it).
void set_torchscript_parameter(torch::jit::Module& module, const std::string& dotted_name,
                               const torch::Tensor& value);

// `init: reset` of a backbone: every parameter re-drawn from LibTorch's global generator (seeded
// by the caller) as PyTorch initialises Linear and Conv layers: a tensor of 2 or more dimensions
// U(±1/√fan_in) (Kaiming-uniform with a = √5; fan_in = size(1) × the receptive field); a 1-D
// "<x>.bias" U(±1/√fan_in) of its "<x>.weight"; any other 1-D or 0-D tensor zeros.
void reset_torchscript_parameters(torch::jit::Module& module);

}  // namespace liftlab
