// libFuzzer target: the run-folder readers (engine/run/run_files.h) and the report and window
// code above them. The first byte picks the file the rest becomes (metrics.csv, summary.json,
// spec.json, spectra.csv, traces.csv, dwells.csv, events.csv or a landscape cache); the other
// files are those of a small valid folder. Each typed reader reads its file strictly (issues
// thrown) and leniently (issues collected), then the window's and the report's readers read the
// folder. Only DataError may come out of the readers.
#include <cstdint>
#include <cstdlib>
#include <fstream>

#include "core/errors.h"
#include "diagnostics/landscape.h"
#include "fuzz_input_file.h"
#include "run/run_files.h"
#include "run_folder_data.h"
#include "summary_table.h"

namespace {

const char* const kFiles[] = {"metrics.csv", "summary.json", "spec.json",  "spectra.csv",
                              "traces.csv",  "dwells.csv",   "events.csv", "landscape.json"};

// The file's own reader, strict then lenient.
template <typename Read>
void read_both_ways(Read read, const std::string& path) {
    try {
        read(path, nullptr);
    } catch (const liftlab::DataError&) {
    }
    std::vector<liftlab::DataError> issues;
    read(path, &issues);
}

void read_with_its_reader(const std::string& file, const std::string& path) {
    using namespace liftlab;
    if (file == "metrics.csv") read_both_ways(read_metrics_csv, path);
    if (file == "spectra.csv") read_both_ways(read_spectra_csv, path);
    if (file == "traces.csv") read_both_ways(read_traces_csv, path);
    if (file == "dwells.csv") read_both_ways(read_dwells_csv, path);
    if (file == "events.csv") read_both_ways(read_events_csv, path);
    if (file == "spec.json") read_spec_json(path);
    if (file == "summary.json") read_summary_json(path);
}

void write_valid_folder(const std::string& dir) {
    std::ofstream(dir + "/metrics.csv") << "step,method,seed,metric,value\n1,adam,0,test_loss,1\n";
    std::ofstream(dir + "/summary.json")
        << R"({"status":"ok","runs":[{"method":"adam","seed":0,"status":"ok","final":{"test_loss":1}}]})";
    std::ofstream(dir + "/spec.json") << R"({"name":"f","seeds":[0],"batch_size":8})";
    std::ofstream(dir + "/spectra.csv") << "step,method,seed,index,sigma\n1,adam,0,0,2\n";
    std::ofstream(dir + "/traces.csv") << "step,method,seed,coordinate,value\n1,adam,0,0,2\n";
    std::ofstream(dir + "/dwells.csv") << "method,seed,dwell\nadam,0,5\n";
    std::ofstream(dir + "/events.csv") << "step,method,seed,key,old,new\n1,adam,0,lr,0.1,0.05\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const std::string dir = liftlab::fuzz::scratch_dir();
    write_valid_folder(dir);
    const std::string file = kFiles[data[0] % (sizeof(kFiles) / sizeof(kFiles[0]))];
    const std::string path = liftlab::fuzz::write_scratch(file, data + 1, size - 1);
    try {
        if (file == "landscape.json") {
            liftlab::LandscapeGrid grid;
            liftlab::PlaneTrajectories trajectories;
            std::string kind;
            // The file must carry key "k" to be read past the header checks.
            liftlab::load_landscape(path, "k", grid, trajectories, &kind);
            return 0;
        }
        try {
            read_with_its_reader(file, path);
        } catch (const liftlab::DataError&) {
        }
        liftlab::read_run_folder(dir);
        liftlab::cli::read_summary_table(dir);
    } catch (const liftlab::DataError&) {
    }
    return 0;
}
