// The run folder's readers (run/run_files.h) and CSV rules (run/csv_rows.h): what RunStore writes
// reads back to the same values (to the bit) under a comma-decimal locale, a label with a comma or
// a quote survives, and every malformed row is an error naming the file and its line — thrown, or
// collected when the caller shows the rest of a damaged file.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <algorithm>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "core/bounded_input.h"
#include "run/run_files.h"
#include "run/run_store.h"
#include "run/state_archive.h"
#include "run/trajectory_file.h"
#include "test_helpers.h"

namespace {

using liftlab::DataError;

// The C library's whole locale set to de_DE.UTF-8 while the object lives (the writer and the
// readers must not follow it), then the previous one.
class GermanNumbers {
public:
    GermanNumbers() : previous_(std::setlocale(LC_ALL, nullptr)) {
        ok_ = std::setlocale(LC_ALL, "de_DE.UTF-8") != nullptr;
        char probe[16];
        std::snprintf(probe, sizeof probe, "%g", 0.5);
        ok_ = ok_ && std::strcmp(probe, "0,5") == 0;
    }
    ~GermanNumbers() { std::setlocale(LC_ALL, previous_.c_str()); }
    bool active() const { return ok_; }

private:
    std::string previous_;
    bool ok_ = false;
};

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The message of the DataError `f` throws ("" when it throws none).
template <typename F>
std::string data_error_of(F f) {
    try {
        f();
    } catch (const DataError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(RunFiles, CsvCellsQuoteOnlyWhatNeedsIt) {
    EXPECT_EQ(liftlab::csv_row({"1", "adam", "0.5"}), "1,adam,0.5\n");
    EXPECT_EQ(liftlab::csv_row({"a,b", "say \"hi\"", ""}), "\"a,b\",\"say \"\"hi\"\"\",\n");
    std::vector<std::string> cells;
    ASSERT_TRUE(liftlab::split_csv_line("\"a,b\",\"say \"\"hi\"\"\",", cells));
    EXPECT_EQ(cells, (std::vector<std::string>{"a,b", "say \"hi\"", ""}));
    ASSERT_TRUE(liftlab::split_csv_line(",,", cells));
    EXPECT_EQ(cells.size(), 3u);
    ASSERT_TRUE(liftlab::split_csv_line("", cells));
    EXPECT_EQ(cells, (std::vector<std::string>{""}));
    EXPECT_FALSE(liftlab::split_csv_line("\"open,1", cells));     // not closed
    EXPECT_FALSE(liftlab::split_csv_line("\"shut\"x,1", cells));  // text after the quote
}

TEST(RunFiles, WhatTheStoreWritesReadsBackUnderACommaLocale) {
    const GermanNumbers german;
    ASSERT_TRUE(german.active()) << "de_DE.UTF-8 is not installed (scripts/install-deps.sh)";
    liftlab::test::TempDir dir;
    const std::string label = "cf,\"prox\"@lr=0.5";  // a comma and quotes in a label
    const double third = 1.0 / 3.0, big = 1.2345678901234567e300, tiny = -2.5e-300;
    {
        liftlab::RunStore store(dir.str());
        store.append_metrics({{3, label, 7, "test_loss", third}, {4, "adam", 1, "test_loss", big}});
        store.append_spectra({{5, label, 7, {2.5, third, tiny}}});
        store.append_traces({{6, label, 7, 2, 0.125}});
        store.append_dwells(label, 7, {0, 12, 40});
        store.append_events({{8, label, 7, "lr", third, 0.05}});
        store.close();
    }
    const auto metrics = liftlab::read_metrics_csv(dir.file("metrics.csv"));
    ASSERT_EQ(metrics.size(), 2u);
    EXPECT_EQ(metrics[0].step, 3);
    EXPECT_EQ(metrics[0].method, label);
    EXPECT_EQ(metrics[0].seed, 7u);
    EXPECT_EQ(metrics[0].metric, "test_loss");
    EXPECT_EQ(metrics[0].value, third);  // shortest round trip: the same bits
    EXPECT_EQ(metrics[1].value, big);

    const auto spectra = liftlab::read_spectra_csv(dir.file("spectra.csv"));
    ASSERT_EQ(spectra.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(spectra[i].index, i);
        EXPECT_EQ(spectra[i].step, 5);
        EXPECT_EQ(spectra[i].method, label);
    }
    EXPECT_EQ(spectra[1].sigma, third);
    EXPECT_EQ(spectra[2].sigma, tiny);

    const auto traces = liftlab::read_traces_csv(dir.file("traces.csv"));
    ASSERT_EQ(traces.size(), 1u);
    EXPECT_EQ(traces[0].coordinate, 2);
    EXPECT_EQ(traces[0].value, 0.125);  // 9 significant digits: exact for 1/8

    const auto dwells = liftlab::read_dwells_csv(dir.file("dwells.csv"));
    ASSERT_EQ(dwells.size(), 3u);
    EXPECT_EQ(dwells[2].dwell, 40);
    EXPECT_EQ(dwells[2].method, label);

    const auto events = liftlab::read_events_csv(dir.file("events.csv"));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].step, 8);
    EXPECT_EQ(events[0].key, "lr");
    EXPECT_EQ(events[0].old_value, third);
    EXPECT_EQ(events[0].new_value, 0.05);

    // The bytes: C numbers, the label quoted.
    const std::string text = liftlab::read_regular_file(dir.file("metrics.csv"), 1 << 20);
    EXPECT_TRUE(contains(text, "3,\"cf,\"\"prox\"\"@lr=0.5\",7,test_loss,0.3333333333333333\n"))
        << text;
}

TEST(RunFiles, MalformedRowsNameFileAndLine) {
    liftlab::test::TempDir dir;
    const std::string path = dir.write("metrics.csv",
                                       "step,method,seed,metric,value\n"
                                       "1,a,0,test_loss,0.5\n"
                                       "2,a,0,test_loss\n"       // 4 cells
                                       "3,a,0,test_loss,zero\n"  // not a number
                                       "4,\"a,0,test_loss,1\n"   // quote not closed
                                       "\n"                      // blank: skipped
                                       "5,a,0,test_loss,0,5\n"   // a decimal comma: 6 cells
                                       "6,a,0,test_loss,0.25\n"
                                       "7,a,0,te");  // cut off: not a row
    // Strict: the first bad row is thrown, with its line.
    const std::string strict = data_error_of([&] { liftlab::read_metrics_csv(path); });
    EXPECT_TRUE(contains(strict, path + ":3: 4 fields, 5 expected")) << strict;
    // Lenient: every bad row named, the good ones read.
    std::vector<DataError> issues;
    const auto rows = liftlab::read_metrics_csv(path, &issues);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[1].step, 6);
    ASSERT_EQ(issues.size(), 4u);
    // The rows' shape is checked first, their cells then: in line order here.
    std::stable_sort(issues.begin(), issues.end(),
                     [](const DataError& a, const DataError& b) { return a.line() < b.line(); });
    EXPECT_EQ(issues[0].line(), 3);
    EXPECT_EQ(issues[1].line(), 4);
    EXPECT_TRUE(contains(issues[1].what(), "value 'zero' is not a number: row left out"));
    EXPECT_EQ(issues[2].line(), 5);
    EXPECT_TRUE(contains(issues[2].what(), "quoted cell is not closed"));
    EXPECT_EQ(issues[3].line(), 7);
    for (const auto& e : issues) EXPECT_EQ(e.file(), path);

    // A step that is not an integer is thrown in any case: the row cannot be placed.
    const std::string spectra = dir.write(
        "spectra.csv", "step,method,seed,index,sigma\n99999999999999999999,adam,0,0,1.5\n");
    issues.clear();
    const std::string step = data_error_of([&] { liftlab::read_spectra_csv(spectra, &issues); });
    EXPECT_TRUE(contains(step, spectra + ":2: step '99999999999999999999' is not an integer"))
        << step;
    const std::string seed = data_error_of(
        [&] { liftlab::read_dwells_csv(dir.write("dwells.csv", "method,seed,dwell\na,-1,3\n")); });
    EXPECT_TRUE(contains(seed, "dwells.csv:2: seed '-1'")) << seed;
    issues.clear();
    EXPECT_TRUE(
        liftlab::read_dwells_csv(dir.write("d2.csv", "method,seed,dwell\na,1,-3\n"), &issues)
            .empty());
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_TRUE(contains(issues[0].what(), "d2.csv:2: dwell '-3' is not a non-negative integer"));

    // Another file's header: the whole file is left out (line 1).
    issues.clear();
    const std::string other = dir.write("traces.csv", "step,method,seed,metric,value\n1,a,0,x,1\n");
    EXPECT_TRUE(liftlab::read_traces_csv(other, &issues).empty());
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].line(), 1);
    EXPECT_TRUE(contains(issues[0].what(), "file left out"));
    EXPECT_TRUE(contains(data_error_of([&] { liftlab::read_traces_csv(other); }),
                         "traces.csv:1: header 'step,method,seed,metric,value' is not"));
}

TEST(RunFiles, ReadsAreBounded) {
    liftlab::test::TempDir dir;
    EXPECT_TRUE(contains(data_error_of([&] { liftlab::read_metrics_csv(dir.file("none.csv")); }),
                         "none.csv"));
    EXPECT_TRUE(
        contains(data_error_of([&] { liftlab::read_events_csv(dir.str()); }), "is a folder"));
    const std::string fifo = dir.file("fifo.csv");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_TRUE(
        contains(data_error_of([&] { liftlab::read_spectra_csv(fifo); }), "not a regular file"));
    EXPECT_TRUE(
        contains(data_error_of([&] { liftlab::read_summary_json(fifo); }), "not a regular file"));
    const std::string deep =
        dir.write("summary.json", std::string(100, '[') + std::string(100, ']'));
    EXPECT_TRUE(
        contains(data_error_of([&] { liftlab::read_summary_json(deep); }), "nested deeper"));
}

TEST(RunFiles, SpecRecordReadsTypedFieldsAndToleratesOtherTypes) {
    liftlab::test::TempDir dir;
    const std::string path = dir.write("spec.json", R"({
      "name": "cf-sweep", "schema_version": 3, "steps": 200, "batch_size": 64,
      "seeds": [0, 1, 2, -4, "x"],
      "task": {"kind": "burgers", "target": "banana", "resolution": 128},
      "data": {"output_dim": 2},
      "methods": [{"name": "cf-prox", "label": "prox"}, {"name": "adam"}, "sgd", {"label": ""}, 7],
      "sweep": {"key": "batch_size", "values": [16, 64]},
      "backbone": {"kind": "torchscript", "script": "model.pt"},
      "shard": {"index": 1, "count": 4}})");
    const auto s = liftlab::read_spec_json(path);
    EXPECT_EQ(s.name, "cf-sweep");
    EXPECT_EQ(s.schema_version, 3);
    EXPECT_FALSE(s.schema_version_bad);
    EXPECT_EQ(s.steps, 200);
    EXPECT_EQ(s.batch_size, 64);
    EXPECT_EQ(s.seed_count, 5u);
    EXPECT_EQ(s.seeds, (std::vector<std::uint64_t>{0, 1, 2}));
    EXPECT_EQ(s.task_kind, "burgers");
    EXPECT_EQ(s.task_target, "banana");
    EXPECT_EQ(s.task_resolution, 128);
    EXPECT_EQ(s.output_dim, 2);
    ASSERT_EQ(s.methods.size(), 3u);
    EXPECT_EQ(s.methods[0].label, "prox");
    EXPECT_EQ(s.methods[0].name, "cf-prox");
    EXPECT_EQ(s.methods[1].label, "adam");
    EXPECT_EQ(s.methods[2].name, "sgd");
    EXPECT_EQ(s.sweep_key, "batch_size");
    EXPECT_EQ(s.sweep_values.size(), 2u);
    EXPECT_EQ(s.model_file, "model.pt");
    EXPECT_EQ(s.shard_index, 1);
    EXPECT_EQ(s.shard_count, 4);
    EXPECT_EQ(s.json["task"]["kind"], "burgers");  // the file as recorded

    // Every field of another type reads as absent; a single seed is one seed.
    const auto odd = liftlab::spec_record_of(nlohmann::json::parse(R"({
      "name": 5, "schema_version": "3", "steps": 1.5, "seeds": 9, "task": [],
      "methods": {"a": 1}, "sweep": {"key": 1, "values": 2}, "icnn": {"script": "i.pt"}})"));
    EXPECT_EQ(odd.name, "");
    EXPECT_TRUE(odd.schema_version_bad);
    EXPECT_EQ(odd.steps, 0);
    EXPECT_EQ(odd.seed_count, 1u);
    EXPECT_EQ(odd.seeds, (std::vector<std::uint64_t>{9}));
    EXPECT_EQ(odd.task_kind, "");
    EXPECT_TRUE(odd.methods.empty());
    EXPECT_EQ(odd.sweep_key, "");
    EXPECT_TRUE(odd.sweep_values.empty());
    EXPECT_EQ(odd.model_file, "i.pt");
    EXPECT_FALSE(odd.shard_index);

    EXPECT_TRUE(
        contains(data_error_of([&] { liftlab::read_spec_json(dir.write("a.json", "[1, 2]")); }),
                 "a.json: not a JSON object"));
    const std::string broken =
        data_error_of([&] { liftlab::read_spec_json(dir.write("b.json", "{\n\"name\": \"x\n")); });
    EXPECT_TRUE(contains(broken, "b.json:2: invalid JSON")) << broken;
}

TEST(RunFiles, SummaryRecordReadsRunsFinalsAndWarnings) {
    liftlab::test::TempDir dir;
    const std::string path = dir.write("summary.json", R"({"status": "cancelled", "runs": [
      {"method": "prox@batch_size=16", "seed": 3, "status": "ok", "step": 40,
       "final": {"test_loss": 0.5, "kappa": null, "note": "x"}, "sweep_value": 16,
       "warnings": ["ESS below 1 %", 4]},
      {"method": "adam", "seed": -1, "status": "diverged", "reason": "loss is NaN",
       "sweep_value": "lr"},
      17]})");
    const auto s = liftlab::read_summary_json(path);
    EXPECT_EQ(s.status, "cancelled");
    EXPECT_EQ(s.run_status(), liftlab::RunStatus::Cancelled);
    EXPECT_TRUE(s.runs_list);
    ASSERT_EQ(s.runs.size(), 3u);
    const auto& a = s.runs[0];
    EXPECT_EQ(a.method, "prox@batch_size=16");
    EXPECT_EQ(a.seed, 3u);
    EXPECT_EQ(a.run_status(), liftlab::RunStatus::Ok);
    EXPECT_EQ(a.step, 40);
    EXPECT_TRUE(a.has_final);
    EXPECT_EQ(a.final, (std::map<std::string, double>{{"test_loss", 0.5}}));  // null: non-finite
    EXPECT_EQ(a.warnings, (std::vector<std::string>{"ESS below 1 %"}));
    EXPECT_EQ(a.sweep_number(), 16.0);
    const auto& b = s.runs[1];
    EXPECT_FALSE(b.seed);  // negative: not a seed
    EXPECT_EQ(b.reason, "loss is NaN");
    EXPECT_FALSE(b.has_final);
    EXPECT_TRUE(b.sweep_value);
    EXPECT_FALSE(b.sweep_number());
    EXPECT_EQ(s.runs[2].method, "");  // not an object: kept as written, no fields
    EXPECT_EQ(s.runs[2].json, 17);

    const auto no_runs = liftlab::summary_record_of(nlohmann::json::parse(R"({"runs": {}})"));
    EXPECT_TRUE(no_runs.has_runs);
    EXPECT_FALSE(no_runs.runs_list);
    EXPECT_FALSE(no_runs.run_status());
}

TEST(RunFiles, TrajectoriesRoundTripWithoutTheUnpickler) {
    liftlab::test::TempDir dir;
    const std::vector<std::int64_t> steps = {0, 15, 30};
    std::vector<torch::Tensor> theta, lifted;
    for (int k = 0; k < 3; ++k) {
        theta.push_back(torch::arange(4, torch::kFloat32) * (k + 1) + 0.1f);
        lifted.push_back(torch::full({2}, k - 0.5, torch::kFloat32));
    }
    const std::string path = liftlab::trajectory_path(dir.str(), "lifter@lr=0.1", 7);
    EXPECT_NE(path.find("/trajectories/"), std::string::npos);
    EXPECT_NE(path.find("_seed7.pt"), std::string::npos);
    const std::string file = dir.write("t.pt", liftlab::trajectory_bytes(steps, theta, lifted));
    const auto t = liftlab::read_trajectory(file);
    EXPECT_EQ(t.steps, steps);
    ASSERT_EQ(t.theta.sizes(), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(t.theta.scalar_type(), torch::kFloat32);  // the checkpoints' own dtype
    EXPECT_TRUE(torch::equal(t.theta, torch::stack(theta)));
    EXPECT_TRUE(torch::equal(t.lifted, torch::stack(lifted)));

    // An earlier LiftLab's torch::save archive: refused before any parser, saying why.
    std::ostringstream old;
    torch::save(std::vector<torch::Tensor>{torch::tensor(steps), torch::stack(theta)}, old);
    const std::string legacy = dir.write("old.pt", old.str());
    EXPECT_TRUE(contains(data_error_of([&] { liftlab::read_trajectory(legacy); }),
                         "earlier LiftLab (a LibTorch archive)"));
    // Damage: truncated, or another state file.
    const std::string bytes = liftlab::trajectory_bytes(steps, theta, lifted);
    const std::string cut = dir.write("cut.pt", bytes.substr(0, bytes.size() - 5));
    EXPECT_TRUE(contains(data_error_of([&] { liftlab::read_trajectory(cut); }), "cut.pt"));
}

// Files move in pieces of kIoChunkBytes (a long read or write holds its core): one of several
// pieces and an odd tail comes back byte for byte, written whole or appended.
TEST(RunFiles, AFileOfSeveralIoChunksIsWrittenAppendedAndReadWhole) {
    liftlab::test::TempDir dir;
    std::string bytes(3 * liftlab::kIoChunkBytes + 7, '\0');
    std::mt19937 rng(5);
    for (auto& c : bytes) c = static_cast<char>(rng() & 0xFF);
    const std::string path = dir.str() + "/big.bin";
    liftlab::write_file_atomic(path, bytes, /*durable=*/false);
    EXPECT_EQ(liftlab::read_regular_file(path, bytes.size()), bytes);
    liftlab::append_file(path, bytes.substr(11));
    EXPECT_EQ(liftlab::read_regular_file(path, 2 * bytes.size()), bytes + bytes.substr(11));
}

// The file is an append-only log: a run appends each log point's checkpoints as a record, and
// a reader sees their concatenation; a cut last record (a killed or still-writing run) is left
// out and reported, anything else malformed is a DataError.
TEST(RunFiles, TrajectoryRecordsAppendAndACutLastRecordIsLeftOut) {
    liftlab::test::TempDir dir;
    auto rows = [](int from, int to) {
        std::vector<std::int64_t> steps;
        std::vector<torch::Tensor> theta, lifted;
        for (int k = from; k < to; ++k) {
            steps.push_back(10 * k);
            theta.push_back(torch::full({3}, k + 0.25, torch::kFloat64));
            lifted.push_back(torch::full({2}, -k - 0.5, torch::kFloat64));
        }
        return std::tuple{steps, theta, lifted};
    };
    const auto [s0, t0, l0] = rows(0, 2);
    const auto [s1, t1, l1] = rows(2, 3);
    const auto [s2, t2, l2] = rows(3, 5);
    const std::string whole = liftlab::trajectory_bytes(s0, t0, l0) +
                              liftlab::trajectory_record_bytes(s1, t1, l1) +
                              liftlab::trajectory_record_bytes(s2, t2, l2);
    const auto t = liftlab::read_trajectory(dir.write("log.pt", whole));
    EXPECT_EQ(t.steps, (std::vector<std::int64_t>{0, 10, 20, 30, 40}));
    EXPECT_FALSE(t.cut_tail);
    ASSERT_EQ(t.theta.sizes(), (std::vector<int64_t>{5, 3}));
    for (int k = 0; k < 5; ++k) {
        EXPECT_EQ(t.theta[k][2].item<double>(), k + 0.25);
        EXPECT_EQ(t.lifted[k][0].item<double>(), -k - 0.5);
    }
    // Cut anywhere inside the last record, its length line included: the first three remain.
    const std::size_t last = whole.size() - liftlab::trajectory_record_bytes(s2, t2, l2).size();
    for (std::size_t keep : {last + 1, last + 3, last + 40, whole.size() - 1}) {
        const auto c = liftlab::read_trajectory(dir.write("c.pt", whole.substr(0, keep)));
        EXPECT_TRUE(c.cut_tail) << keep;
        EXPECT_EQ(c.steps, (std::vector<std::int64_t>{0, 10, 20})) << keep;
        EXPECT_EQ(c.theta.size(0), 3) << keep;
    }
    // A complete record of another width, steps going back, a length that is not a number.
    const auto [w, wt, wl] = rows(5, 6);
    std::vector<torch::Tensor> wide = {torch::zeros({4}, torch::kFloat64)};
    const std::string bad_width =
        dir.write("w.pt", whole + liftlab::trajectory_record_bytes(w, wide, wl));
    EXPECT_TRUE(
        contains(data_error_of([&] { liftlab::read_trajectory(bad_width); }), "width or dtype"));
    const std::string back =
        dir.write("b.pt", whole + liftlab::trajectory_record_bytes(s1, t1, l1));
    EXPECT_TRUE(contains(data_error_of([&] { liftlab::read_trajectory(back); }), "not increasing"));
    const std::string junk = dir.write("j.pt", whole + "x9\n");
    EXPECT_TRUE(contains(data_error_of([&] { liftlab::read_trajectory(junk); }), "j.pt"));
    // The single-archive format of the previous LiftLab is still read.
    liftlab::StateArchive old;
    old.put_text("trajectory", "1");
    old.put("steps", torch::tensor(s0, torch::kInt64));
    old.put("theta", torch::stack(t0));
    old.put("lifted", torch::stack(l0));
    const auto o = liftlab::read_trajectory(dir.write("old1.pt", old.serialize()));
    EXPECT_EQ(o.steps, s0);
    EXPECT_TRUE(torch::equal(o.theta, torch::stack(t0)));
}
