// How the window names a run wherever it shows one (the window title, the curves' title, the key
// of a comparison), so that an opened run says how it was run: preset, task, the user's model
// file, methods, seeds, the steps it really ran of those planned, its status, and its date to
// the second.
#pragma once
#include <QString>

namespace liftlab {

struct RunFolderData;

// "cf-regression · teacher-regression · my_cnn.pt · adam, sgd · seeds 0, 1, 2 ·
//  525 of 1,500 steps, cancelled · 2026-12-04 21:08:54"
QString runCaption(const QString& runDir, const RunFolderData& run);
// The short form for a comparison's title: "cf-regression #2 (525 of 1,500 steps, cancelled)".
QString runShortCaption(const QString& runDir, const RunFolderData& run);

}  // namespace liftlab
