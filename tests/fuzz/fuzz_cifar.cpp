// libFuzzer target: the CIFAR binary reader. The first byte picks the layout (label bytes and
// label index), the rest is the record file. Only DataError may come out; accepted labels lie
// below the class count.
#include <cstdint>
#include <cstdlib>

#include "core/errors.h"
#include "data/cifar_binary.h"
#include "fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const int label_bytes = 1 + (data[0] & 1);
    const int label_index = label_bytes == 2 ? (data[0] >> 1) & 1 : 0;
    const std::string path = liftlab::fuzz::write_scratch("batch.bin", data + 1, size - 1);
    try {
        const auto d = liftlab::read_cifar_binary({path}, label_bytes, label_index);
        if (d.labels.numel() == 0 || d.labels.max().item<int64_t>() >= d.num_classes) std::abort();
    } catch (const liftlab::DataError&) {
    }
    return 0;
}
