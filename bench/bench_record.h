// One measurement as one line of the benchmarks' JSON-lines schema "liftlab-bench/1" (every bench
// program and reference script prints only such lines on stdout; bench/check_bench_output.py
// checks them, the scripts in bench/ turn them into tables). A line:
//   {"schema": "liftlab-bench/1", "bench": <program>, "impl": "liftlab" | "pytorch",
//    "case": <what one line measures>, "method": <method name, or "">, "threads": <int ≥ 1>,
//    "params": {<size>: number | string, ...}, "results": {<value>_<unit>: number, ...}}
// Result keys end in their unit: _per_s, _ms, _s, _mb, _gb_per_s, _bytes or _ratio. Lines of the
// same bench and case carry the same params and results keys.
#pragma once
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace liftlab::bench {

inline void print_record(const std::string& bench, const std::string& kase,
                         const std::string& method, int threads,
                         const nlohmann::ordered_json& params,
                         const nlohmann::ordered_json& results) {
    nlohmann::ordered_json line;
    line["schema"] = "liftlab-bench/1";
    line["bench"] = bench;
    line["impl"] = "liftlab";
    line["case"] = kase;
    line["method"] = method;
    line["threads"] = threads;
    line["params"] = params;
    line["results"] = results;  // a NaN is written as null, which the schema check refuses
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
}

}  // namespace liftlab::bench
