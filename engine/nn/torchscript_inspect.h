// What a TorchScript file holds, for front ends that must not include LibTorch (the GUI's model
// picker lists the parameters so the user can tick an ICNN's non-negative ones).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace liftlab {

struct TorchScriptParameterInfo {
    std::string name;            // dotted, as icnn.constrained takes it
    std::vector<int64_t> shape;  // sizes
};

// The parameters of the TorchScript module in `path`, in the module's order. Throws SpecError
// naming the file and what is wrong (not TorchScript, no forward, no parameters).
std::vector<TorchScriptParameterInfo> inspect_torchscript(const std::string& path,
                                                          const std::string& key);

}  // namespace liftlab
