// The compute device of a run: the spec's `device` (cpu, cuda or auto) as a torch::Device.
// Data are generated on the CPU (the same bits on every machine) and moved to the device once;
// the trainers build their models on the CPU with the run's seed, then move them, and create
// every further tensor on the device of their data. The closed-form solves run wherever their
// statistics are: LAPACK on the CPU, torch's Cholesky elsewhere (lastlayer/proximal_solve.cpp).
// A CPU build of LibTorch (Debian's) has no CUDA device: `cuda` is then a spec error and `auto`
// means cpu. docs/cli.md ("Device") says how to build against a CUDA LibTorch.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

namespace liftlab {

// The names a spec may give: cpu, cuda, auto.
const std::vector<std::string>& device_names();

// Whether this LibTorch sees a CUDA device.
bool cuda_available();

// The device `name` asks for on this machine: cpu → CPU; cuda → the first CUDA device (throws
// SpecError on key "device" when there is none); auto → CUDA when available, else CPU.
torch::Device resolve_device(const std::string& name);

// "cpu", "cuda:0", …: how run folders and messages name a device.
std::string device_label(const torch::Device& device);

}  // namespace liftlab
