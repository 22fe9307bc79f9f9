#include "core/device.h"

#include "core/errors.h"

namespace liftlab {

const std::vector<std::string>& device_names() {
    static const std::vector<std::string> names = {"cpu", "cuda", "auto"};
    return names;
}

bool cuda_available() {
    return torch::cuda::is_available();
}

torch::Device resolve_device(const std::string& name) {
    if (name == "cpu") return torch::Device(torch::kCPU);
    if (name == "cuda") {
        if (!cuda_available())
            throw SpecError("device",
                            "cuda asked for, but this LibTorch sees no CUDA device (a CPU build, "
                            "or no GPU/driver); use cpu or auto, or build against a CUDA "
                            "LibTorch (docs/cli.md, Device)");
        return torch::Device(torch::kCUDA, 0);
    }
    if (name == "auto")
        return cuda_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    throw SpecError("device", "must be one of cpu, cuda, auto; got '" + name + "'");
}

std::string device_label(const torch::Device& device) {
    return device.str();
}

}  // namespace liftlab
