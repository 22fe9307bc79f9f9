// Figures of a finished (or killed) run, rendered offscreen from its metrics.csv.
#pragma once
#include <string>
#include <vector>

namespace liftlab::cli {

// Writes <run_dir>/figures/<metric>.<format> for the loss metrics found in the run, one curve per
// method (mean over seeds, band = min..max over seeds when there are several). Needs a
// QApplication. Returns the written paths. Throws DataError for an unreadable run folder.
// `notes`, when given, receives what of the folder was left out (RunFolderData::notes).
std::vector<std::string> render_report(const std::string& run_dir, const std::string& format,
                                       std::vector<std::string>* notes = nullptr);

}  // namespace liftlab::cli
