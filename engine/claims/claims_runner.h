// `liftlab-cli claims`: re-checks the claims table (claims/claim_registry.h). Every claim's runs
// are ordinary run folders under <claims folder>/runs/; the verdicts are written as claims.json,
// claims.csv and claims.md beside them. Torch-free interface.
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "claims/claim_evaluation.h"
#include "claims/claim_registry.h"
#include "training/progress.h"

namespace liftlab::claims {

struct ClaimsOptions {
    Tier tier = Tier::Fast;
    std::string out_dir = "runs";  // parent of the claims folder claims-<tier>-YYYYmmdd-HHMMSS
    // Continue this claims folder: sub-runs that finished there are read, not run again; the
    // tier and the other options are the folder's own (claims.json "options").
    std::string resume_dir;
    std::vector<std::string> only;  // claim ids; empty: every claim
    // claim id → a finished run folder, or "DIR,DIR,…" (the --shard folders of one sweep)
    std::map<std::string, std::string> reuse;
    bool tune = false;  // the tuned comparison outside the full tier too (its grids, tier budget)
    const std::atomic<bool>* stop = nullptr;
};

// One row of the table.
struct ClaimRow {
    std::string id, claim, paper;
    std::string tier;     // "fast", "full", "reused", or "not run (…)"
    std::string command;  // the run behind the verdict, as a liftlab-cli command
    std::string run_dir;  // relative to the claims folder ("" when not run)
    std::string figure;   // the key figure, relative to the claims folder ("" when none)
    Verdict preset;       // at the preset settings
    bool tuned = false;
    Verdict best;               // at each method's best setting on the validation split
    std::string best_settings;  // "adam: methods.adam.lr=3e-3; cf-prox: …"
    std::string tuning;         // the grids and the selection rule
    std::vector<std::string> tuning_scores;  // "adam methods.adam.lr=1e-3: 0.118 (3 seeds)", …
};

struct ClaimsReport {
    std::string dir;
    Tier tier = Tier::Fast;
    bool tune = false;
    std::vector<std::string> only;  // the options it ran with (for --resume)
    std::map<std::string, std::string> reuse;
    std::string started, finished;  // local time, ISO 8601
    double wall_seconds = 0;
    std::string blas_core;  // OpenBLAS kernels of the runs (spec.json versions.blas_core)
    // ok | cancelled; running in the files written after each claim until the check ends.
    std::string status = "ok";
    std::vector<ClaimRow> rows;
};

struct ClaimsCallbacks {
    std::function<void(const std::string&)> note;  // one line per step ("claim 3/19 …")
    ProgressCallback progress;                     // the running sub-run's progress
    // After each sub-run that was run or reused (a front end renders its figures here).
    std::function<void(const std::string& run_dir)> run_done;
};

// Runs (or reuses) every selected claim's runs and evaluates them; writes the files at the end
// and after every claim (so an interrupted check leaves the rows it has). Throws SpecError or
// DataError for a bad option (unknown claim id, unreadable --reuse folder), WriteError when the
// folder cannot be written.
ClaimsReport run_claims(const ClaimsOptions& options, const ClaimsCallbacks& callbacks = {});

// claims.json (everything), claims.csv (one row per claim) and claims.md (the table and each
// claim's evidence) in report.dir.
void write_claims_files(const ClaimsReport& report);

// A recipe as the liftlab-cli command that runs it.
std::string recipe_command(const Recipe& recipe);

}  // namespace liftlab::claims
