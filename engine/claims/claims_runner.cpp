#include "claims/claims_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <locale>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "run/folder_lock.h"
#include "run/run_folder_schema.h"
#include "run/run_store.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "stats/hypothesis_tests.h"
#include "training/resume.h"
#include "training/runner.h"

namespace liftlab::claims {

namespace fs = std::filesystem;
using stats::format_number;
using stats::format_p;

namespace {

constexpr const char* kClaimsJson = "claims.json";
constexpr const char* kRecipeFile = "recipe.json";  // beside a sub-run: what it was run with

std::string local_time_text() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[40];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return buf;
}

std::string stamp_text() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    return buf;
}

// A fresh folder <parent>/<name>-YYYYmmdd-HHMMSS[-N].
std::string create_claims_folder(const std::string& parent, const std::string& name) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw WriteError(parent, "cannot create the folder: " + ec.message());
    const std::string base = (fs::path(parent) / (name + "-" + stamp_text())).string();
    std::string dir = base;
    for (int i = 2;; ++i) {
        if (fs::create_directory(dir, ec)) break;
        if (ec) throw WriteError(dir, "cannot create the claims folder: " + ec.message());
        dir = base + "-" + std::to_string(i);
    }
    return dir;
}

std::string shell_quote(const std::string& s) {
    const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string("-_.=/,:@+").find(c) != std::string::npos;
    });
    if (plain && !s.empty()) return s;
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

nlohmann::json seeds_json(int n) {
    nlohmann::json s = nlohmann::json::array();
    for (int i = 0; i < n; ++i) s.push_back(i);
    return s;
}

// The spec of a recipe (preset, overrides, seeds) in JSON form, before parsing.
nlohmann::json recipe_json(const Recipe& recipe) {
    nlohmann::json j = load_spec_source(recipe.preset);
    for (const auto& s : recipe.sets) apply_override(j, s);
    j["seeds"] = seeds_json(recipe.seeds);
    return j;
}

// The finished run folder inside `parent` made from exactly `recipe_text`, or "".
std::string finished_run_in(const std::string& parent, const std::string& recipe_text) {
    std::error_code ec;
    if (!fs::is_directory(parent, ec)) return "";
    std::ifstream in(fs::path(parent) / kRecipeFile);
    std::stringstream buffer;
    buffer << in.rdbuf();
    if (!in || buffer.str() != recipe_text) return "";
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
        if (!entry.is_directory() || entry.path().filename().string().front() == '.') continue;
        const auto summary = entry.path() / run_folder::kSummary;
        if (!fs::exists(summary)) continue;
        try {
            const auto status = read_summary_json(summary.string()).run_status();
            if (status == RunStatus::Ok || status == RunStatus::Diverged)
                return entry.path().string();
        } catch (const DataError&) {
        }
    }
    return "";
}

// The newest run folder inside `parent` made from exactly `recipe_text` (and `spec`) that did not
// finish but can be continued (a killed or cancelled sub-run of an earlier check): its resume
// plan, or null. Why a folder cannot be continued goes to `why` (it is then run afresh).
std::shared_ptr<const ResumePlan> unfinished_run_in(const std::string& parent,
                                                    const std::string& recipe_text,
                                                    const ExperimentSpec& spec, std::string* why) {
    std::error_code ec;
    if (!fs::is_directory(parent, ec)) return nullptr;
    std::ifstream in(fs::path(parent) / kRecipeFile);
    std::stringstream buffer;
    buffer << in.rdbuf();
    if (!in || buffer.str() != recipe_text) return nullptr;
    std::vector<std::string> candidates;
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
        if (!entry.is_directory() || entry.path().filename().string().front() == '.') continue;
        if (fs::exists(entry.path() / run_folder::kSpec)) candidates.push_back(entry.path());
    }
    std::sort(candidates.begin(), candidates.end());  // <preset>-YYYYmmdd-HHMMSS[-N]: by time
    for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
        try {
            const ExperimentSpec saved = resumable_spec(*it);
            if (to_json(saved) != to_json(spec)) continue;  // an older recipe's run
            return prepare_resume(*it, saved);
        } catch (const std::exception& e) {
            if (why) *why = *it + ": " + e.what();
            return nullptr;  // the newest run of this recipe cannot go on: start again
        }
    }
    return nullptr;
}

struct SubRunner {
    const ClaimsOptions& options;
    const ClaimsCallbacks& callbacks;
    std::string runs_dir;                      // <claims folder>/runs
    std::map<std::string, std::string> cache;  // spec text → run folder (run once per check)
    bool cancelled = false;

    void note(const std::string& s) const {
        if (callbacks.note) callbacks.note(s);
    }

    // Runs `spec_json` into runs/<slot>/ (or reuses a finished identical run there or earlier in
    // this check); returns the run folder, or "" when cancelled.
    std::string run(const nlohmann::json& spec_json, const std::string& slot,
                    const std::string& what) {
        const std::string text = spec_json.dump(2);
        if (auto it = cache.find(text); it != cache.end()) {
            note("  " + what + ": the same run as " + it->second + " (reused)");
            return it->second;
        }
        const std::string parent = (fs::path(runs_dir) / slot).string();
        if (const auto done = finished_run_in(parent, text); !done.empty()) {
            note("  " + what + ": finished earlier, " + done);
            cache[text] = done;
            if (callbacks.run_done) callbacks.run_done(done);
            return done;
        }
        if (options.stop && options.stop->load()) {
            cancelled = true;
            return "";
        }
        const ExperimentSpec spec = parse_spec(spec_json);
        RunOptions ro;
        ro.out_dir = parent;
        ro.stop = options.stop;
        // A sub-run an earlier check left unfinished (killed, or cancelled) goes on from its
        // saved states, as `liftlab-cli run --resume` would: hours of a full-tier run are not
        // thrown away by a stop.
        std::string why;
        ro.resume = unfinished_run_in(parent, text, spec, &why);
        if (!why.empty()) note("  " + what + ": cannot continue " + why + "; running it again");
        std::error_code ec;
        fs::create_directories(parent, ec);
        if (ec) throw WriteError(parent, "cannot create the folder: " + ec.message());
        write_file_atomic((fs::path(parent) / kRecipeFile).string(), text);
        if (ro.resume) {
            int done = 0;
            for (const auto& [u, st] : ro.resume->units) done += st.finished ? 1 : 0;
            note("  " + what + ": continuing " + ro.resume->dir + " (" + std::to_string(done) +
                 " unit(s) done)");
        } else {
            note("  " + what + ": " + spec.name + ", " + std::to_string(spec.methods.size()) +
                 " method(s) × " + std::to_string(spec.seeds.size()) + " seed(s), " +
                 std::to_string(spec.steps) + " steps");
        }
        const RunResult result = run_experiment(spec, ro, callbacks.progress);
        if (result.status == RunStatus::Cancelled) {
            cancelled = true;
            return "";
        }
        cache[text] = result.run_dir;
        if (callbacks.run_done) callbacks.run_done(result.run_dir);
        return result.run_dir;
    }
};

// A --reuse value: one run folder, or "DIR,DIR,…" — the --shard folders of one sweep.
std::vector<std::string> reused_dirs(const std::string& text) {
    std::vector<std::string> dirs;
    std::string cur;
    for (char ch : text + ",") {
        if (ch != ',') {
            cur += ch;
        } else if (!cur.empty()) {
            dirs.push_back(cur);
            cur.clear();
        }
    }
    return dirs;
}

// The rows of every reused folder as one table (shards hold disjoint seeds of the same methods).
RunTable read_reused(const std::string& text) {
    const auto dirs = reused_dirs(text);
    if (dirs.empty()) throw SpecError("--reuse", "names no run folder");
    RunTable table = read_run_table(dirs.front());
    for (size_t i = 1; i < dirs.size(); ++i) {
        RunTable more = read_run_table(dirs[i]);
        table.rows.insert(table.rows.end(), more.rows.begin(), more.rows.end());
    }
    return table;
}

std::string relative_to(const std::string& path, const std::string& base) {
    if (path.empty()) return "";
    std::error_code ec;
    const auto rel = fs::relative(path, base, ec);
    return ec || rel.empty() || rel.string().rfind("..", 0) == 0 ? path : rel.string();
}

// The method entry of `label` in a spec's "methods", as JSON.
nlohmann::json method_entry(const nlohmann::json& spec, const std::string& label) {
    for (const auto& m : spec.at("methods"))
        if ((m.contains("label") && m["label"] == label) ||
            (!m.contains("label") && m.value("name", "") == label))
            return m;
    throw SpecError("methods", "claim tuning: no method labelled '" + label + "' in the run");
}

std::string joined_claim_text(const std::vector<std::string>& v, const std::string& sep) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
    return out;
}

// Tuning: every method's grid on the validation split, then each method at its best setting on
// the test split. Returns false when cancelled.
bool tune_claim(const Claim& claim, const Recipe& recipe, SubRunner& runner, ClaimRow& row) {
    const Tuning& t = claim.tuning;
    const Comparison& c = claim.cmp;
    const nlohmann::json base = recipe_json(recipe);
    std::vector<std::string> grids;
    for (const auto& axis : t.axes) {
        std::vector<std::string> settings;
        for (const auto& s : axis.settings)
            settings.push_back("{" + joined_claim_text(s, ", ") + "}");
        grids.push_back(axis.method + ": " + joined_claim_text(settings, " "));
    }
    row.tuning = "grids of " + std::to_string(t.axes.front().settings.size()) +
                 " settings each — " + joined_claim_text(grids, "; ") + ". Chosen by the mean " +
                 t.select_metric + " over " + std::to_string(t.seeds) +
                 " seeds on a validation split (task.split=validation: the last 20 % of the "
                 "training rows, held out; the test split unread)";
    std::vector<RunTable> finals;
    std::vector<std::string> best_text;
    for (const auto& axis : t.axes) {
        double best = NAN;
        size_t best_i = 0;
        for (size_t i = 0; i < axis.settings.size(); ++i) {
            nlohmann::json j = base;
            j["methods"] = nlohmann::json::array({method_entry(base, axis.method)});
            for (const auto& s : axis.settings[i]) apply_override(j, s);
            apply_override(j, "task.split=validation");
            if (!c.at.empty())
                j["sweep"]["values"] = nlohmann::json::array({nlohmann::json::parse(c.at)});
            j["seeds"] = seeds_json(t.seeds);
            const std::string dir = runner.run(
                j, claim.id + "/tune-" + axis.method + "-" + std::to_string(i),
                "tuning " + axis.method + " " + joined_claim_text(axis.settings[i], " "));
            if (dir.empty()) return false;
            const auto vals = read_run_table(dir).values(t.select_metric, axis.method, c.at);
            std::vector<double> v;
            for (const auto& [seed, x] : vals) v.push_back(x);
            const double score = v.size() == static_cast<size_t>(t.seeds) ? stats::mean(v) : NAN;
            row.tuning_scores.push_back(
                axis.method + " " + joined_claim_text(axis.settings[i], " ") + ": " +
                (std::isfinite(score) ? format_number(score, 4) : std::string("a seed failed")) +
                " (" + std::to_string(v.size()) + "/" + std::to_string(t.seeds) + " seeds)");
            const bool better =
                std::isfinite(score) &&
                (!std::isfinite(best) || (t.select_lower_is_better ? score < best : score > best));
            if (better) {
                best = score;
                best_i = i;
            }
        }
        if (!std::isfinite(best)) {
            row.best.notes.push_back(axis.method + ": no setting finished on every seed");
            return true;
        }
        nlohmann::json j = base;
        j["methods"] = nlohmann::json::array({method_entry(base, axis.method)});
        for (const auto& s : axis.settings[best_i]) apply_override(j, s);
        if (!c.at.empty())
            j["sweep"]["values"] = nlohmann::json::array({nlohmann::json::parse(c.at)});
        j["seeds"] = seeds_json(t.final_seeds > 0 ? t.final_seeds : recipe.seeds);
        const std::string dir = runner.run(j, claim.id + "/best-" + axis.method,
                                           axis.method + " at its best setting (test split)");
        if (dir.empty()) return false;
        finals.push_back(read_run_table(dir));
        best_text.push_back(axis.method + ": " + joined_claim_text(axis.settings[best_i], " "));
    }
    row.tuned = true;
    row.best_settings = joined_claim_text(best_text, "; ");
    row.best = evaluate_claim(claim, merge_tables(finals));
    return true;
}

// claims.json round trip of a verdict.
nlohmann::json verdict_json(const Verdict& v) {
    return {{"verdict", v.verdict},
            {"ours", v.ours},
            {"seeds", v.seeds},
            {"test", v.test},
            {"p", std::isfinite(v.p) ? nlohmann::json(v.p) : nlohmann::json(nullptr)},
            {"interval", v.interval},
            {"needed", v.needed},
            {"time_to_target", v.time_to_target},
            {"notes", v.notes}};
}

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string md_cell(std::string s) {
    std::string out;
    for (char c : s)
        out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
    return out;
}

std::string verdict_cell(const Verdict& v) {
    std::string s =
        v.verdict == "holds" || v.verdict == "refuted" ? "**" + v.verdict + "**" : v.verdict;
    if (!v.needed.empty()) s += " (to decide: " + v.needed + ")";
    return s;
}

std::string p_text(double p) {
    return std::isfinite(p) ? format_p(p) : "–";
}

}  // namespace

std::string recipe_command(const Recipe& recipe) {
    if (!recipe.runs()) return "";
    std::string cmd = "liftlab-cli run " + shell_quote(recipe.preset) + " --seeds " +
                      std::to_string(recipe.seeds);
    for (const auto& s : recipe.sets) cmd += " --set " + shell_quote(s);
    return cmd;
}

ClaimsReport run_claims(const ClaimsOptions& opts, const ClaimsCallbacks& callbacks) {
    ClaimsOptions options = opts;
    ClaimsReport report;
    if (!options.resume_dir.empty()) {
        const auto path = (fs::path(options.resume_dir) / kClaimsJson).string();
        std::ifstream in(path);
        if (!in) throw DataError(path, 0, "cannot be read (not a claims folder?)");
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(in);
        } catch (const std::exception& e) {
            throw DataError(path, 0, std::string("is not valid JSON: ") + e.what());
        }
        const auto& o = j.at("options");
        options.tier = parse_tier(o.at("tier").get<std::string>());
        options.only = o.at("only").get<std::vector<std::string>>();
        options.reuse = o.at("reuse").get<std::map<std::string, std::string>>();
        options.tune = o.at("tune").get<bool>();
        report.dir = options.resume_dir;
    }
    for (const auto& id : options.only)
        if (!find_claim(id)) {
            std::string ids;
            for (const auto& c : claim_registry()) ids += (ids.empty() ? "" : ", ") + c.id;
            throw SpecError("--only", "no claim '" + id + "' (claims: " + ids + ")");
        }
    for (const auto& [id, dir] : options.reuse) {
        if (!find_claim(id)) throw SpecError("--reuse", "no claim '" + id + "'");
        read_reused(dir);  // readable now, not after an hour of other runs
    }
    report.tier = options.tier;
    report.tune = options.tune;
    if (report.dir.empty())
        report.dir =
            create_claims_folder(options.out_dir, std::string("claims-") + to_string(options.tier));
    // One check writes a claims folder at a time: a second `--resume` of it is refused while this
    // one runs. The lock file names this process, so a window can tell a check that died
    // ("running" in claims.json, its process gone) from one still going.
    const FolderLock lock(report.dir, /*writer=*/true);
    report.started = local_time_text();
    const auto t0 = std::chrono::steady_clock::now();

    report.only = options.only;
    report.reuse = options.reuse;
    SubRunner runner{options, callbacks, (fs::path(report.dir) / "runs").string(), {}, false};
    auto save = [&] {
        report.wall_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        report.finished = local_time_text();
        write_claims_files(report);
    };

    report.status = "running";  // what the files say until the check ends
    // Written before the first claim runs: a check killed inside its first sub-run (hours, at the
    // full tier) leaves a folder that --resume and the window can read, not a bare runs/ tree.
    save();
    std::vector<const Claim*> selected;
    for (const auto& c : claim_registry())
        if (options.only.empty() ||
            std::find(options.only.begin(), options.only.end(), c.id) != options.only.end())
            selected.push_back(&c);
    int index = 0;
    for (const Claim* claim : selected) {
        ++index;
        ClaimRow row;
        row.id = claim->id;
        row.claim = claim->text;
        row.paper = claim->paper;
        const Recipe& recipe = claim->recipe(options.tier);
        runner.note("claim " + std::to_string(index) + "/" + std::to_string(selected.size()) + " " +
                    claim->id);
        std::string dir;
        const auto reuse = options.reuse.find(claim->id);
        if (reuse != options.reuse.end()) {
            dir = reused_dirs(reuse->second).front();
            row.tier = "reused";
            row.command = "(reused run folder(s) " + reuse->second + ")";
            runner.note("  reusing " + reuse->second);
        } else if (!recipe.runs()) {
            row.tier = std::string("not run at the ") + to_string(options.tier) +
                       " tier (cost: see the full tier's command)";
            row.command = recipe_command(claim->full);
            row.preset.verdict = "not run";
            report.rows.push_back(row);
            save();
            continue;
        } else {
            row.tier = to_string(options.tier);
            row.command = recipe_command(recipe);
            dir = runner.run(recipe_json(recipe), claim->id, "run");
            if (dir.empty()) break;
        }
        RunTable table =
            reuse != options.reuse.end() ? read_reused(reuse->second) : read_run_table(dir);
        if (report.blas_core.empty()) report.blas_core = table.blas_core;
        row.run_dir = relative_to(dir, report.dir);
        if (!claim->figure.empty()) {
            const auto fig = fs::path(dir) / run_folder::kFigures / (claim->figure + ".png");
            if (fs::exists(fig)) row.figure = relative_to(fig.string(), report.dir);
        }
        row.preset = evaluate_claim(*claim, table);
        const bool tune = claim->tuning.tuned() && recipe.runs() && reuse == options.reuse.end() &&
                          (options.tier == Tier::Full || options.tune);
        if (tune && !tune_claim(*claim, recipe, runner, row)) {
            report.rows.push_back(row);
            break;
        }
        runner.note("  " + claim->id + ": " + row.preset.verdict +
                    (std::isfinite(row.preset.p) ? " (p = " + format_p(row.preset.p) + ")" : "") +
                    (row.tuned ? "; at the tuned best: " + row.best.verdict : ""));
        report.rows.push_back(row);
        save();
    }
    report.status = runner.cancelled ? "cancelled" : "ok";
    save();
    return report;
}

void write_claims_files(const ClaimsReport& report) {
    const fs::path dir(report.dir);
    // claims.json: everything.
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : report.rows)
        rows.push_back({{"id", r.id},
                        {"claim", r.claim},
                        {"paper", r.paper},
                        {"tier", r.tier},
                        {"command", r.command},
                        {"run_dir", r.run_dir},
                        {"figure", r.figure},
                        {"preset", verdict_json(r.preset)},
                        {"tuned", r.tuned},
                        {"best", verdict_json(r.best)},
                        {"best_settings", r.best_settings},
                        {"tuning", r.tuning},
                        {"tuning_scores", r.tuning_scores}});
    const nlohmann::json j = {{"tier", to_string(report.tier)},
                              {"tune", report.tune},
                              {"status", report.status},
                              {"started", report.started},
                              {"finished", report.finished},
                              {"wall_seconds", report.wall_seconds},
                              {"blas_core", report.blas_core},
                              {"alpha", kAlpha},
                              {"power", kPower},
                              {"options",
                               {{"tier", to_string(report.tier)},
                                {"only", report.only},
                                {"reuse", report.reuse},
                                {"tune", report.tune}}},
                              {"claims", rows}};
    write_file_atomic((dir / kClaimsJson).string(), j.dump(2));

    // claims.csv: one row per claim.
    std::string csv =
        "id,claim,paper,ours,seeds,test,p,interval,verdict,seeds_needed,time_to_target,tier,"
        "command,tuned_settings,tuned_ours,tuned_p,tuned_verdict\n";
    for (const auto& r : report.rows) {
        const std::vector<std::string> cells = {
            r.id,
            r.claim,
            r.paper,
            r.preset.ours,
            r.preset.seeds,
            r.preset.test,
            std::isfinite(r.preset.p) ? format_number(r.preset.p, 6) : "",
            r.preset.interval,
            r.preset.verdict,
            r.preset.needed,
            r.preset.time_to_target,
            r.tier,
            r.command,
            r.best_settings,
            r.tuned ? r.best.ours : "",
            r.tuned && std::isfinite(r.best.p) ? format_number(r.best.p, 6) : "",
            r.tuned ? r.best.verdict : ""};
        for (size_t i = 0; i < cells.size(); ++i) csv += (i ? "," : "") + csv_cell(cells[i]);
        csv += "\n";
    }
    write_file_atomic((dir / "claims.csv").string(), csv);

    // claims.md: the table, then each claim's evidence.
    std::ostringstream md;
    md.imbue(std::locale::classic());
    md << "# The claims, re-checked (" << to_string(report.tier) << " tier)\n\n";
    md << "`liftlab-cli claims --tier " << to_string(report.tier) << (report.tune ? " --tune" : "")
       << "`, started " << report.started
       << (report.status == "running" ? ", last written " : ", finished ") << report.finished
       << " (" << format_number(report.wall_seconds / 60, 3) << " min wall";
    if (!report.blas_core.empty()) md << "; OpenBLAS kernels " << report.blas_core;
    md << "; status " << report.status << "). Every verdict is at α = " << format_number(kAlpha)
       << " for the stated test: **holds** / **refuted** where the test decides, otherwise "
          "inconclusive with the seeds per method a decision would need (power "
       << format_number(kPower) << " at the measured difference and spread).\n\n";
    md << "| claim | paper | run here | measured | test | p | verdict |";
    const bool any_tuned = std::any_of(report.rows.begin(), report.rows.end(),
                                       [](const ClaimRow& r) { return r.tuned; });
    if (any_tuned) md << " at the tuned best |";
    md << "\n|---|---|---|---|---|---|---|" << (any_tuned ? "---|" : "") << "\n";
    for (const auto& r : report.rows) {
        md << "| " << md_cell(r.claim) << " | " << md_cell(r.paper) << " | " << md_cell(r.tier)
           << (r.preset.seeds.empty() ? "" : ", seeds " + r.preset.seeds) << " | "
           << md_cell(r.preset.ours) << " | " << md_cell(r.preset.test) << " | "
           << p_text(r.preset.p) << " | " << md_cell(verdict_cell(r.preset)) << " |";
        if (any_tuned)
            md << " "
               << (r.tuned ? md_cell(verdict_cell(r.best) + ", p = " + p_text(r.best.p) + ": " +
                                     r.best.ours)
                           : std::string("–"))
               << " |";
        md << "\n";
    }
    md << "\n## Evidence per claim\n";
    for (const auto& r : report.rows) {
        md << "\n### " << r.id << "\n\n" << r.claim << " — paper: " << r.paper << ".\n\n";
        if (!r.command.empty()) md << "- Command: `" << r.command << "`\n";
        if (!r.run_dir.empty()) md << "- Run folder: `" << r.run_dir << "`\n";
        md << "- Measured: " << r.preset.ours << " (seeds " << r.preset.seeds << ")\n";
        if (!r.preset.test.empty())
            md << "- Test: " << r.preset.test << "; p = " << p_text(r.preset.p)
               << (r.preset.interval.empty() ? "" : "; " + r.preset.interval) << "\n";
        md << "- Verdict: " << verdict_cell(r.preset) << "\n";
        if (!r.preset.time_to_target.empty())
            md << "- Time to target: " << r.preset.time_to_target << "\n";
        for (const auto& n : r.preset.notes) md << "- Note: " << n << "\n";
        if (r.tuned) {
            md << "- Tuning: " << r.tuning << "\n";
            for (const auto& s : r.tuning_scores) md << "  - " << s << "\n";
            md << "- At each method's best (" << r.best_settings << "): " << r.best.ours << "; "
               << r.best.test << "; p = " << p_text(r.best.p)
               << (r.best.interval.empty() ? "" : "; " + r.best.interval) << "; verdict "
               << verdict_cell(r.best) << "\n";
            if (!r.best.time_to_target.empty())
                md << "- Time to target at the best settings: " << r.best.time_to_target << "\n";
            for (const auto& n : r.best.notes) md << "- Note (tuned): " << n << "\n";
        }
        if (!r.figure.empty()) md << "\n![" << r.id << "](" << r.figure << ")\n";
    }
    write_file_atomic((dir / "claims.md").string(), md.str());
}

}  // namespace liftlab::claims
