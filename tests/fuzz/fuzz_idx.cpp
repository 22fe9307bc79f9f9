// libFuzzer target: the IDX reader (raw or gzip). Only DataError may come out; an accepted file's
// tensor has the header's shape.
#include <cstdint>
#include <cstdlib>

#include "core/errors.h"
#include "data/idx_loader.h"
#include "fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = liftlab::fuzz::write_scratch("data-idx-ubyte", data, size);
    try {
        const auto t = liftlab::read_idx(path);
        // The header's 4th byte is the rank — of the raw file; a gzip file's is inside it.
        const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
        if (size < 4 || (!gzip && t.dim() != data[3])) std::abort();
    } catch (const liftlab::DataError&) {
    }
    return 0;
}
