// The check of a loaded TorchScript module's tensors (nn/torchscript_module.h): LibTorch sets the
// sizes, strides and offset a pickle declares without checking them against the storage, so a
// damaged file would have training read past it.
#pragma once
#include <torch/script.h>

#include <string>

namespace liftlab {

// A tensor that reaches past its storage (or before its start: a negative offset or stride), or
// one LiftLab does not read (a sparse one), named `name` in the problem; "" for a fine one or an
// undefined, storage-less or empty tensor.
std::string tensor_problem(const std::string& name, const at::Tensor& t);

// The first tensor_problem among every tensor `module` holds: its attributes, recursively
// (parameters, buffers and others, and the tensors in its lists, tuples and dicts), then the
// constants of its methods' code ("a constant of the code"). "" when there is none.
std::string module_tensor_problem(const torch::jit::Module& module);

}  // namespace liftlab
