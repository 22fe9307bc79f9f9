// `liftlab-cli claims`: re-checks the claims table (engine/claims/) and writes its run folder:
// every sub-run, claims.json / claims.csv / claims.md and the one-page report claims.pdf.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace liftlab::cli {

struct ClaimsArgs {
    std::string tier = "fast";
    std::string out_dir = "runs";
    std::string resume_dir;
    std::vector<std::string> only;
    std::map<std::string, std::string> reuse;
    bool tune = false;
};

int command_claims(const ClaimsArgs& args);

// The one-page PDF of a claims folder (claims.json and the key figures it names): the table and
// a grid of the figures. Needs a QApplication; returns the file written. Throws on failure.
std::string render_claims_pdf(const std::string& claims_dir);

}  // namespace liftlab::cli
