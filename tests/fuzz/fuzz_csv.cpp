// libFuzzer target: the CSV table reader (csv-regression, cpflow-tabular). Only DataError may come
// out; an accepted table is rectangular, non-empty and finite within single precision.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "core/errors.h"
#include "data/csv_table.h"
#include "fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = liftlab::fuzz::write_scratch("table.csv", data, size);
    try {
        const auto t = liftlab::read_csv_table(path);
        if (t.columns.empty() || t.rows.empty()) std::abort();
        for (const auto& row : t.rows) {
            if (row.size() != t.columns.size()) std::abort();
            for (double v : row)
                if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max())
                    std::abort();
        }
    } catch (const liftlab::DataError&) {
    }
    return 0;
}
