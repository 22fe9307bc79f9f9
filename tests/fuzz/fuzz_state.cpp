// libFuzzer target: the resume state reader (run/state_archive.h), the decoding of a unit's
// saved results (training/resume.h get_run_summary), and the trajectory log of state archives
// (run/trajectory_file.h) for inputs that start as one does. Only DataError may come out.
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "fuzz_input_file.h"
#include "run/state_archive.h"
#include "run/trajectory_file.h"
#include "training/resume.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    if (bytes.rfind("LIFTLAB-TRAJECTORY", 0) == 0) {
        try {
            (void)liftlab::read_trajectory(liftlab::fuzz::write_scratch("t.pt", data, size));
        } catch (const liftlab::DataError&) {
        }
        return 0;
    }
    try {
        const auto a = liftlab::StateArchive::parse(bytes, "fuzz.state");
        if (a.has("runs")) {
            const int64_t n = a.integer("runs");
            for (int64_t i = 0; i < n && i < 8; ++i)
                liftlab::get_run_summary(a, "run" + std::to_string(i) + ".");
        }
        if (a.has("w")) {
            const auto t = a.tensors("w");
            (void)t;
        }
    } catch (const liftlab::DataError&) {
    }
    return 0;
}
