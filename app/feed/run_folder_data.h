// A run folder read into plain values (DESIGN.md "Run store"): metrics.csv, spectra.csv,
// traces.csv, dwells.csv, summary.json and spec.json. No Qt, no torch: the CLI report and the
// GUI both start from this. Reading never modifies the folder; a file still being written is read
// up to its last complete row.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace liftlab {

struct RunFolderData {
    std::string dir;
    std::string name;                       // spec name (the preset), else the folder name
    std::string title;                      // "name  (batch B, S seeds)"
    std::string task_kind;                  // spec task.kind
    std::string status;                     // summary.json status ("" without summary)
    std::vector<std::string> method_order;  // labels in order of first appearance

    // metric → method → step → values over seeds
    std::map<std::string, std::map<std::string, std::map<int, std::vector<double>>>> metrics;
    // method → step → singular values (first seed of the method)
    std::map<std::string, std::map<int, std::vector<double>>> spectra;
    // (method, coordinate) → (steps, values) of the first seed of the method
    std::map<std::pair<std::string, int>, std::pair<std::vector<double>, std::vector<double>>>
        traces;
    // method → completed shoulder dwells in steps, every seed pooled
    std::map<std::string, std::vector<double>> dwells;
    // method → final metric → values over seeds, in summary order
    std::vector<std::pair<std::string, std::map<std::string, std::vector<double>>>> finals;
    // summary.json's per-run warnings (e.g. an importance-sampling ESS below 1 %), each as
    // "method (seed S): text", in summary order.
    std::vector<std::string> warnings;
    // What of the folder could not be read and was left out, each naming the file (and line):
    // an unreadable spec.json or summary.json, a malformed row of spectra/traces/dwells. A row
    // cut off by a killed writer (the last line, without its newline) is not a note.
    std::vector<std::string> notes;

    // A sweep (spec "sweep"): the swept key and, per method label without the "@key=value"
    // suffix (in summary order), numeric sweep value → final metric → values over the seeds
    // that ended "ok". Empty without a sweep or with non-numeric values.
    std::string sweep_key;
    std::vector<
        std::pair<std::string, std::map<double, std::map<std::string, std::vector<double>>>>>
        sweep;
    int batch_size = 0;       // spec batch_size
    int steps = 0;            // spec steps
    int output_dim = 0;       // spec data.output_dim (targets per closed-form row)
    int rows_per_sample = 1;  // closed-form rows per sample (burgers: every grid point)
    // A classification run: the loss each spec method label trains on ("cross-entropy" or
    // "squared error"), so that test_loss is not read across the two. Empty for other tasks.
    std::map<std::string, std::string> training_loss;

    // A claims folder (`liftlab-cli claims`, claims.json): its table, one entry per claim, each
    // field as written (p: NaN when the claim has no test). Empty for an ordinary run folder, and
    // for a claims folder whose first claim has not finished (claims_folder tells them apart).
    bool claims_folder = false;
    struct ClaimLine {
        std::string id, claim, paper, tier, ours, seeds, test, verdict, needed, tuned_verdict;
        double p = 0;
    };
    std::vector<ClaimLine> claims;

    bool icnn() const;  // an ICNN-family task (icnn-*, cpflow-*)
    std::vector<std::string> metric_names() const;
    const std::map<std::string, std::vector<double>>* final_of(const std::string& method) const;
};

// Throws DataError when `dir` has no readable metrics.csv (not a run folder) and is no claims
// folder either (claims.json: then only `claims`, the name and the title are filled); every other
// file is optional.
RunFolderData read_run_folder(const std::string& dir);

// The training loss of each method of a classification task kind: label → "cross-entropy" (the
// registry's cross_entropy methods, ce) or "squared error" (on one-hot targets: every other
// method). `methods` holds (label, registered name) pairs; empty for any other task kind.
std::map<std::string, std::string> classification_losses(
    const std::string& task_kind, const std::vector<std::pair<std::string, std::string>>& methods);

double mean_of(const std::vector<double>& v);  // NaN for none
double sd_of(const std::vector<double>& v);    // sample sd, 0 for fewer than two
double median_of(std::vector<double> v);       // NaN for none

}  // namespace liftlab
