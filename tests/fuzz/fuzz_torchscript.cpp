// libFuzzer target: loading a user's TorchScript file (nn/torchscript_module.h) — our checks and
// LibTorch's archive reader behind them. Only SpecError may come out.
#include <cstdint>

#include "core/errors.h"
#include "fuzz_input_file.h"
#include "nn/torchscript_inspect.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = liftlab::fuzz::write_scratch("model.pt", data, size);
    try {
        liftlab::inspect_torchscript(path, "backbone.script");
    } catch (const liftlab::SpecError&) {
    }
    return 0;
}
