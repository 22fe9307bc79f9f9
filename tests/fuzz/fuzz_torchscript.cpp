// libFuzzer target: loading a user's TorchScript file (nn/torchscript_module.h) — our checks and
// LibTorch's archive reader behind them. Only SpecError may come out. Every byte of every storage
// of the loaded module's tensors is then read here, in instrumented code, so that a storage
// LibTorch made larger than the record behind it is an ASan report, not a silent read.
#include <cstdint>

#include "core/errors.h"
#include "fuzz_input_file.h"
#include "nn/torchscript_module.h"

namespace {

unsigned touch(const c10::IValue& v) {
    if (!v.isTensor() || !v.toTensor().defined() || !v.toTensor().has_storage()) return 0;
    const auto& storage = v.toTensor().storage();
    const auto* bytes = static_cast<const unsigned char*>(storage.data());
    unsigned sum = 0;
    for (size_t i = 0; bytes && i < storage.nbytes(); ++i) sum += bytes[i];
    return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = liftlab::fuzz::write_scratch("model.pt", data, size);
    try {
        const auto loaded = liftlab::load_torchscript(path, "backbone.script");
        volatile unsigned sum = 0;
        for (const auto& a : loaded.module.named_attributes(/*recurse=*/true))
            sum += touch(a.value);
    } catch (const liftlab::SpecError&) {
    }
    return 0;
}
