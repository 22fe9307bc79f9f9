// Two or three run folders shown as one comparison: their values merged into one RunFolderData
// whose method labels carry the run's tag ("adam (A)", "adam (B)"; method_colors.h runTag), so
// every panel draws them side by side — each method in its own colour, each run in its line
// style (the curves) or under its own label (bars) — and what each run really did.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "run_folder_data.h"

namespace liftlab {

// The runs' values with tagged labels, in the order given (run A first). name, title, dir,
// task kind, status, batch size and steps are run A's; warnings and notes are prefixed "A: ".
RunFolderData merge_compared_runs(const std::vector<std::shared_ptr<const RunFolderData>>& runs);

// The largest step the run logged (its real length: a cancelled run stops short of its steps);
// 0 when it logged nothing.
int last_logged_step(const RunFolderData& run);

}  // namespace liftlab
