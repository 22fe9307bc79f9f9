// `liftlab-cli run --resume DIR` (docs/reliability.md): a killed run continues from the state its
// units saved at their last log point (resume/unit<k>.state, run/state_archive.h) to the same
// final metrics an uninterrupted run gives. Units are written to the run's files in order, so the
// states that saw those files form a prefix: finished units are taken as they are, the last one is
// continued from its step, and the shared CSV files are cut back to the bytes it had seen. A unit
// that ran beside an unfinished earlier one wrote its rows aside (resume/unit<k>.rows/), and its
// state ("held") is continued with those files cut back to what it had seen; units without a
// state run from the start. So every row after a state is written again exactly once.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "run/shard.h"
#include "spec/experiment_spec.h"
#include "training/run_types.h"

namespace liftlab {

class StateArchive;

struct UnitResumeState {
    int unit = 0;
    int step = 0;           // the last step the state holds (0: the unit's start)
    bool finished = false;  // the unit is done: `runs` are its results
    bool restart = false;   // its trainers keep no state: it runs again from its start
    // Its rows were aside (an earlier unit still ran): its state's sizes are of those files.
    bool held = false;
    std::shared_ptr<StateArchive> archive;
    std::vector<MethodRunSummary> runs;
};

class FolderLock;
struct ResumePlan {
    std::string dir;
    std::shared_ptr<FolderLock> lock;      // held for as long as the plan lives
    std::map<int, UnitResumeState> units;  // units with a saved state
    // A shard's folder (spec.json's "shard"): only its cells ran, so only they saved states, and
    // the resumed run runs only them.
    Shard shard;
    const UnitResumeState* find(int unit) const {
        const auto it = units.find(unit);
        return it == units.end() ? nullptr : &it->second;
    }
};

// The run folder's spec (spec.json) for a resume. Throws SpecError/DataError naming the file.
ExperimentSpec resumable_spec(const std::string& dir);

// Reads DIR/resume/, checks that the run can be continued (it did not finish; every method can be
// resumed; the states fit the spec) and cuts the shared CSV files back to what the last state had
// seen. Throws SpecError (key "resume") or DataError naming the file and what is wrong; nothing is
// changed on disk unless it returns.
std::shared_ptr<const ResumePlan> prepare_resume(const std::string& dir,
                                                 const ExperimentSpec& spec);

// A forked run (issue 40): the parent's kept states at `step`, by unit. Every method of the
// child starts from the parent's method of the same label, else from the fork source
// (spec.fork_source, or the parent's one method): its whole state when the two are the same
// method, else through Trainer's ForkStart (another method of the same family).
struct ForkPlan {
    std::string parent;  // the parent run folder
    int step = 0;        // the child's first step is step + 1
    std::map<int, std::shared_ptr<StateArchive>> units;
    // By child label: the parent's method it starts from (its label and settings in the parent).
    std::map<std::string, MethodSpec> sources;
    // The fork source as resolved (spec.fork_source, or the parent's one method when a child
    // label needed it): what the child's spec.json records.
    std::string fork_source;
};
// The latest step at or before `step` at which every unit of the run in `parent_dir` kept a fork
// state (spec key fork_state_every). Throws SpecError ("--from-step") naming what there is.
int latest_fork_step(const std::string& parent_dir, int step);
// Every step at which every unit of the run in `parent_dir` kept a fork state, ascending (empty
// when there is none). Throws SpecError/DataError when its spec.json cannot be read.
std::vector<int> kept_fork_steps(const std::string& parent_dir);
// The parent's spec (its spec.json), for the child to start from.
ExperimentSpec fork_parent_spec(const std::string& parent_dir);
// Reads the states `child` (parent, fork_step) starts from and checks that they fit it: the same
// seeds and sweep; every child method has a source — its own label in the parent, or the fork
// source, named when the parent ran several methods — of its own family (gradient and
// closed-form methods; ICNN strategies on an ICNN of the same width, with a slack for the lifter
// family). Throws SpecError (key "methods" or "fork_source") / DataError.
std::shared_ptr<const ForkPlan> prepare_fork(const ExperimentSpec& child);
// prepare_fork's checks without reading the states (the parent's spec.json and whether its state
// files exist): cheap enough for a front end to say why a fork is refused before it starts. The
// plan it returns has no `units`. Throws as prepare_fork does.
std::shared_ptr<ForkPlan> check_fork(const ExperimentSpec& child);
// states/unit<u>_step<s>.state of a run folder.
std::string fork_state_path(const std::string& dir, int unit, int step);

// One (method, seed) summary in a state archive, under `prefix`.
void put_run_summary(StateArchive& a, const std::string& prefix, const MethodRunSummary& r);
MethodRunSummary get_run_summary(const StateArchive& a, const std::string& prefix);

// The unit state file of unit `unit` in a run folder.
std::string unit_state_path(const std::string& dir, int unit);
// The folder where unit `unit` writes its rows while an earlier unit still runs (the shared CSV
// files, training/run_reporter.h): a state marked "held" records sizes there.
std::string unit_rows_aside_path(const std::string& dir, int unit);

}  // namespace liftlab
