// libFuzzer target: the run-folder readers the report and the window use. The first byte picks
// the file the rest becomes (metrics.csv, summary.json, spec.json, spectra.csv, traces.csv,
// dwells.csv or a landscape cache); the other files are those of a small valid folder. Only
// DataError may come out of the readers.
#include <cstdint>
#include <cstdlib>
#include <fstream>

#include "core/errors.h"
#include "diagnostics/landscape.h"
#include "fuzz_input_file.h"
#include "run/run_store.h"
#include "run_folder_data.h"
#include "summary_table.h"

namespace {

const char* const kFiles[] = {"metrics.csv", "summary.json", "spec.json",     "spectra.csv",
                              "traces.csv",  "dwells.csv",   "landscape.json"};

void write_valid_folder(const std::string& dir) {
    std::ofstream(dir + "/metrics.csv") << "step,method,seed,metric,value\n1,adam,0,test_loss,1\n";
    std::ofstream(dir + "/summary.json")
        << R"({"status":"ok","runs":[{"method":"adam","seed":0,"status":"ok","final":{"test_loss":1}}]})";
    std::ofstream(dir + "/spec.json") << R"({"name":"f","seeds":[0],"batch_size":8})";
    std::ofstream(dir + "/spectra.csv") << "step,method,seed,index,sigma\n1,adam,0,0,2\n";
    std::ofstream(dir + "/traces.csv") << "step,method,seed,coordinate,value\n1,adam,0,0,2\n";
    std::ofstream(dir + "/dwells.csv") << "method,seed,dwell\nadam,0,5\n";
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
        liftlab::read_run_folder(dir);
        liftlab::cli::read_summary_table(dir);
    } catch (const liftlab::DataError&) {
    }
    return 0;
}
