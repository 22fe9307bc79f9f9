// Forking in the window (issue 40, "Fork from step N…"): whether a run folder can be forked and
// from which kept step, with the engine's own rules (training/resume.h: latest_fork_step, the
// same as `liftlab-cli run --fork DIR --from-step N`). Reads only spec.json and the states/
// listing: cheap enough for the GUI thread. The fork itself runs on the worker
// (TrainingSession::start with a spec naming its parent: run_experiment prepares the plan).
#pragma once
#include <QString>
#include <QVector>

namespace liftlab {

// Why `runDir` cannot be forked ("" when it can): no folder, or no fork state kept (the run
// needs fork_state_every > 0), or what the engine says is wrong with its states.
QString whyNotForkable(const QString& runDir);

// The latest step at or before `step` at which every unit of `runDir` kept a fork state; -1 with
// `error` set when there is none.
int forkStepAtOrBefore(const QString& runDir, int step, QString* error);

// The steps at which every unit of `runDir` kept a fork state, ascending (the checkpoint
// slider's positions); empty when there are none or the folder cannot be read.
QVector<int> keptForkSteps(const QString& runDir);

}  // namespace liftlab
