// Hostile inputs (issue 11): bounded readers, range-checked numbers, path-safe names, checked
// writes. Every case checks the message names the file, line or key.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/bounded_input.h"
#include "core/errors.h"
#include "core/path_component.h"
#include "data/csv_table.h"
#include "data/idx_loader.h"
#include "run/run_store.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "test_helpers.h"
#include "training/runner.h"

using liftlab::DataError;
using liftlab::SpecError;
using liftlab::test::data_error;
using liftlab::test::TempDir;
using nlohmann::json;

namespace {

using liftlab::test::has;

std::string nested(int depth) {
    return std::string(static_cast<size_t>(depth), '[') +
           std::string(static_cast<size_t>(depth), ']');
}

json minimal_hostile_spec() {
    return json::parse(R"({"name": "t", "methods": [{"name": "cf-prox", "lambda": 2.0},
                                                      {"name": "adam", "lr": 0.001}]})");
}

SpecError hostile_spec_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const SpecError& e) {
        return e;
    }
    ADD_FAILURE() << "expected a SpecError";
    return SpecError("", "");
}

}  // namespace

TEST(BoundedInput, DeepNestingIsRefusedWithFileAndLine) {
    const std::string text = "{\"a\": 1,\n \"b\": " + nested(100000) + "}";
    const auto e = data_error([&] { liftlab::parse_json_bounded(text, "deep.json"); });
    EXPECT_EQ(e.file(), "deep.json");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(has(e.what(), "nested deeper than 64")) << e.what();
    // 64 levels are fine, and brackets inside strings do not count.
    EXPECT_NO_THROW(liftlab::parse_json_bounded(nested(64), "ok.json"));
    EXPECT_EQ(liftlab::parse_json_bounded("\"" + nested(1000) + "\"", "s").get<std::string>(),
              nested(1000));
    EXPECT_EQ(liftlab::parse_json_bounded(R"(["\"[[[", 1])", "s")[1], 1);
}

TEST(BoundedInput, InvalidJsonAndHugeNumbersNameTheLine) {
    const auto e =
        data_error([] { liftlab::parse_json_bounded("{\n\"a\": 1,\n\"b\": }", "x.json"); });
    EXPECT_EQ(e.line(), 3);
    EXPECT_FALSE(has(e.what(), "json.exception")) << e.what();
    const auto big =
        data_error([] { liftlab::parse_json_bounded("{\n\n\"a\": 1e400}", "n.json"); });
    EXPECT_EQ(big.line(), 3);
    EXPECT_TRUE(has(big.what(), "1e400")) << big.what();
}

TEST(BoundedInput, FifosDevicesFoldersAndLargeFilesAreRefused) {
    TempDir dir;
    const std::string fifo = dir.file("pipe.json");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto t0 = std::chrono::steady_clock::now();
    const auto e = data_error([&] { liftlab::read_regular_file(fifo, 1000); });
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));  // did not block
    EXPECT_TRUE(has(e.what(), "not a regular file")) << e.what();
    // Spec files go through the same reader.
    EXPECT_TRUE(has(data_error([&] { liftlab::load_spec_source(fifo); }).what(), "pipe.json"));
    EXPECT_TRUE(has(data_error([] { liftlab::read_regular_file("/dev/zero", 1000); }).what(),
                    "not a regular file"));
    EXPECT_TRUE(has(data_error([&] { liftlab::read_regular_file(dir.str(), 1000); }).what(),
                    "is a folder"));
    const auto big = dir.write("big.json", std::string(2000, ' '));
    EXPECT_TRUE(
        has(data_error([&] { liftlab::read_regular_file(big, 1000); }).what(), "too large"));
    EXPECT_EQ(liftlab::read_regular_file(big, 2000).size(), 2000u);
}

TEST(PathComponent, OnlySingleSafeComponentsPass) {
    for (const char* ok : {"cf-prox", "lifter_2", "a.b", "x@batch_size=8", "A9"})
        EXPECT_TRUE(liftlab::is_safe_path_component(ok)) << ok;
    for (const char* bad : {"", ".", "..", "../x", "a/b", "/abs", "a b", "a,b", "x\n", "é"})
        EXPECT_FALSE(liftlab::is_safe_path_component(bad)) << bad;
    EXPECT_FALSE(liftlab::is_safe_path_component(std::string(201, 'a')));
    EXPECT_EQ(liftlab::to_safe_path_component("../../x"), ".._.._x");
    EXPECT_EQ(liftlab::to_safe_path_component("lifter@hidden=[16 64]"), "lifter@hidden=_16_64_");
    EXPECT_EQ(liftlab::to_safe_path_component(".."), "_");
    EXPECT_EQ(liftlab::to_safe_path_component("cf-prox"), "cf-prox");
}

TEST(HostileSpec, IntegersAreNeverNarrowed) {
    auto j = minimal_hostile_spec();
    j["batch_size"] = 4294967328ULL;  // 2^32 + 32: was read as 32
    auto e = hostile_spec_error([&] { liftlab::parse_spec(j); });
    EXPECT_EQ(e.key(), "batch_size");
    EXPECT_TRUE(has(e.what(), "4294967328 is out of range")) << e.what();
    j = minimal_hostile_spec();
    j["steps"] = 1000000000000LL;
    EXPECT_EQ(hostile_spec_error([&] { liftlab::parse_spec(j); }).key(), "steps");
    j = minimal_hostile_spec();
    j["task"] = {{"n_train", -5000000000LL}};
    EXPECT_EQ(hostile_spec_error([&] { liftlab::parse_spec(j); }).key(), "task.n_train");
    j = minimal_hostile_spec();
    j["seeds"] = json::array({0, -1});
    e = hostile_spec_error([&] { liftlab::parse_spec(j); });
    EXPECT_EQ(e.key(), "seeds[1]");
    j = minimal_hostile_spec();
    j["seeds"] = json::array({18446744073709551615ULL});  // the largest uint64 is a seed
    EXPECT_EQ(liftlab::parse_spec(j).seeds.front(), 18446744073709551615ULL);
}

TEST(HostileSpec, DuplicateSeedsThreadsNamesAndLabelsAreRefused) {
    auto j = minimal_hostile_spec();
    j["seeds"] = json::array({3, 1, 3});
    auto e = hostile_spec_error([&] { liftlab::parse_spec(j); });
    EXPECT_EQ(e.key(), "seeds[2]");
    EXPECT_TRUE(has(e.what(), "duplicate seed 3")) << e.what();
    j = minimal_hostile_spec();
    j["threads"] = 100000;
    EXPECT_EQ(hostile_spec_error([&] { liftlab::parse_spec(j); }).key(), "threads");
    j["threads"] = liftlab::max_threads();
    EXPECT_NO_THROW(liftlab::parse_spec(j));
    for (const char* name : {"../escape", "/tmp/abs", "..", "a/b", ""}) {
        j = minimal_hostile_spec();
        j["name"] = name;
        EXPECT_EQ(hostile_spec_error([&] { liftlab::parse_spec(j); }).key(), "name") << name;
    }
    for (const char* label : {"../../../x", "a/b", "a,b"}) {
        j = minimal_hostile_spec();
        j["methods"][0]["label"] = label;
        EXPECT_EQ(hostile_spec_error([&] { liftlab::parse_spec(j); }).key(), "methods[0].label")
            << label;
    }
}

TEST(HostileSpec, OverridesAreBounded) {
    auto j = minimal_hostile_spec();
    auto e = hostile_spec_error([&] { liftlab::apply_override(j, "batch_size=" + nested(65000)); });
    EXPECT_EQ(e.key(), "batch_size");
    EXPECT_TRUE(has(e.what(), "nested deeper")) << e.what();
    e = hostile_spec_error(
        [&] { liftlab::apply_override(j, "methods.99999999999999999999999.lr=1"); });
    EXPECT_EQ(e.key(), "methods.99999999999999999999999");
    e = hostile_spec_error([&] { liftlab::apply_override(j, "methods.cf-prox.lambda=1e400"); });
    EXPECT_EQ(e.key(), "methods.cf-prox.lambda");
    EXPECT_TRUE(has(e.what(), "1e400")) << e.what();
    // A moderately nested value reaches the type check, whose message does not dump it.
    liftlab::apply_override(j, "batch_size=" + nested(60));
    e = hostile_spec_error([&] { liftlab::parse_spec(j); });
    EXPECT_EQ(e.key(), "batch_size");
    EXPECT_LT(std::string(e.what()).size(), 200u) << e.what();
}

TEST(HostileSpec, RecordedSpecsOfEarlierVersionsAreRead) {
    auto resolved = liftlab::to_json(liftlab::parse_spec(minimal_hostile_spec()));
    EXPECT_EQ(resolved["schema_version"], liftlab::kSpecSchemaVersion);
    // An earlier version: no schema_version, a key since removed, one since added missing.
    resolved.erase("schema_version");
    resolved["diagnostics"]["old_probe"] = 3;
    resolved["legacy_flag"] = true;
    resolved["methods"][0]["momentum_old"] = 0.9;
    resolved["diagnostics"].erase("checkpoint_every");
    std::vector<std::string> dropped;
    const auto s = liftlab::parse_recorded_spec(resolved, &dropped);
    EXPECT_EQ(s.methods.size(), 2u);
    EXPECT_EQ(dropped, (std::vector<std::string>{"diagnostics.old_probe", "legacy_flag",
                                                 "methods[].momentum_old"}));
    // The strict parser still names the unknown key, and a newer folder is refused.
    EXPECT_EQ(hostile_spec_error([&] { liftlab::parse_spec(resolved); }).key(),
              "methods[0].momentum_old");
    resolved = liftlab::to_json(s);
    resolved["schema_version"] = liftlab::kSpecSchemaVersion + 1;
    EXPECT_EQ(hostile_spec_error([&] { liftlab::parse_recorded_spec(resolved); }).key(),
              "schema_version");
}

TEST(HostileData, CsvValuesBeyondSinglePrecisionAreDataErrors) {
    TempDir dir;
    const auto f = dir.write("big.csv", "a,y\n1,2\n1e308,3\n");
    const auto e = data_error([&] { liftlab::read_csv_table(f); });
    EXPECT_EQ(e.line(), 3);
    EXPECT_TRUE(has(e.what(), "beyond single precision")) << e.what();
    EXPECT_EQ(
        data_error([&] { liftlab::read_csv_table(dir.write("inf.csv", "a,y\n1e400,1\n")); }).line(),
        2);
}

// IDX headers whose size products overflow: 0 items of 0x0500ff31 × 0x03050500 × 0x01020305
// bytes each (fuzz_idx's crash: LibTorch's size arithmetic overflowed and the reader crashed), and
// counts whose 64-bit product wraps. Each is a DataError naming the implausible size.
TEST(HostileData, IdxSizeProductsThatOverflowAreRefused) {
    TempDir dir;
    auto header = [](std::vector<uint32_t> dims) {
        std::string s = {0, 0, 8, static_cast<char>(dims.size())};
        for (uint32_t d : dims)
            for (int shift = 24; shift >= 0; shift -= 8)
                s += static_cast<char>((d >> shift) & 0xff);
        return s;
    };
    for (const auto& dims : std::vector<std::vector<uint32_t>>{
             {0, 0x0500ff31, 0x03050500, 0x01020305},  // the fuzzer's inputs
             {0, 0, 0xfc000000, 0x95000000},
             {0xffffffff, 0xffffffff, 0xffffffff, 0x100},  // wraps a 64-bit product
             {2, 0x10000, 0x10000, 0x10000}}) {
        const auto f = dir.write("bad-idx-ubyte", header(dims) + std::string(16, '\1'));
        const auto e = data_error([&] { liftlab::read_idx(f); });
        EXPECT_TRUE(has(e.what(), "implausible size")) << e.what();
    }
    // A plausible empty file still reads: 0 items of 28 × 28.
    const auto t = liftlab::read_idx(dir.write("empty-idx-ubyte", header({0, 28, 28})));
    EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{0, 28, 28}));
}

TEST(HostileData, BatchLargerThanTheDataFailsBeforeAnyFolder) {
    TempDir dir;
    const auto csv = dir.write("three.csv", "a,b,y\n1,2,3\n4,5,6\n7,8,9\n");
    auto j = minimal_hostile_spec();
    j["task"] = {{"kind", "csv-regression"}, {"csv_path", csv}};
    j["batch_size"] = 32;
    const auto spec = liftlab::parse_spec(j);
    liftlab::RunOptions options;
    options.out_dir = dir.file("runs");
    const auto e = hostile_spec_error([&] { liftlab::run_experiment(spec, options); });
    EXPECT_EQ(e.key(), "batch_size");
    EXPECT_TRUE(has(e.what(), "larger than the 2 training samples")) << e.what();
    EXPECT_FALSE(std::filesystem::exists(dir.file("runs")) &&
                 !std::filesystem::is_empty(dir.file("runs")));
}

TEST(RunStoreWrites, MetricsReaderRangeChecksAndReadsSubnormals) {
    const liftlab::test::KeepSubnormals subnormals;  // the values below include denormals
    TempDir dir;
    const auto ok = dir.write("m.csv",
                              "step,method,seed,metric,value\n"
                              "1,adam,18446744073709551615,test_loss,9.9998886718268301e-321\n");
    const auto rows = liftlab::read_metrics_csv(ok);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_GT(rows[0].value, 0.0);
    EXPECT_EQ(rows[0].seed, 18446744073709551615ULL);
    const auto bad_step = dir.write("s.csv", "step,method,seed,metric,value\n4294967296,a,0,l,1\n");
    auto e = data_error([&] { liftlab::read_metrics_csv(bad_step); });
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(has(e.what(), "step '4294967296'")) << e.what();
    const auto bad_value = dir.write("v.csv", "step,method,seed,metric,value\n1,a,0,l,1e400\n");
    EXPECT_TRUE(has(data_error([&] { liftlab::read_metrics_csv(bad_value); }).what(), "1e400"));
}

// Lowers the soft file size limit (a full-disk stand-in) with SIGXFSZ ignored, so writes past
// it fail with EFBIG; restores both when it goes out of scope.
class FileSizeLimit {
public:
    explicit FileSizeLimit(rlim_t bytes) {
        getrlimit(RLIMIT_FSIZE, &old_);
        old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
        rlimit limit = old_;
        limit.rlim_cur = bytes;
        setrlimit(RLIMIT_FSIZE, &limit);
    }
    ~FileSizeLimit() {
        setrlimit(RLIMIT_FSIZE, &old_);
        std::signal(SIGXFSZ, old_handler_);
    }

private:
    rlimit old_{};
    void (*old_handler_)(int) = SIG_DFL;
};

TEST(RunStoreWrites, AFailedWriteIsAWriteErrorNamingTheFile) {
    TempDir dir;
    {
        FileSizeLimit limit(8192);
        liftlab::RunStore store(dir.str());
        try {
            for (int step = 0; step < 100000; ++step)
                store.append_metrics({{step, "adam", 0, "test_loss", 0.5}});
            ADD_FAILURE() << "8 KiB limit, 100000 rows, no error";
        } catch (const liftlab::WriteError& e) {
            EXPECT_TRUE(has(e.what(), "metrics.csv")) << e.what();
            EXPECT_TRUE(has(e.what(), "File too large")) << e.what();
        }
    }
    // write_file_atomic into a folder that does not exist.
    EXPECT_THROW(liftlab::write_file_atomic(dir.file("no/such/dir/x.json"), "{}"),
                 liftlab::WriteError);
    // Names that are not one path component never become folders.
    EXPECT_THROW(liftlab::RunStore::create(dir.str(), "../escape"), std::invalid_argument);
    EXPECT_THROW(liftlab::RunStore::create("", "x"), std::invalid_argument);
}

TEST(RunStoreWrites, AWriteErrorEndsTheRunFailedNotRunning) {
    TempDir dir;
    auto j = minimal_hostile_spec();
    j["task"] = {{"n_train", 256}, {"n_test", 64}};
    j["backbone"] = {{"hidden", json::array({16})}, {"feature_dim", 8}};
    j["steps"] = 100000;
    j["log_every"] = 1;
    j["threads"] = 1;
    const auto spec = liftlab::parse_spec(j);
    liftlab::RunOptions options;
    options.out_dir = dir.str();
    {
        FileSizeLimit limit(32768);
        EXPECT_THROW(liftlab::run_experiment(spec, options), liftlab::WriteError);
    }
    std::string run_dir;
    for (const auto& e : std::filesystem::directory_iterator(dir.str()))
        if (e.is_directory()) run_dir = e.path().string();
    ASSERT_FALSE(run_dir.empty());
    const auto summary = liftlab::read_json_file(run_dir + "/summary.json");
    EXPECT_EQ(summary["status"], "failed");
    EXPECT_TRUE(has(summary["reason"].get<std::string>(), "metrics.csv")) << summary.dump();
    ASSERT_EQ(summary["runs"].size(), 2u);
    for (const auto& r : summary["runs"]) EXPECT_EQ(r["status"], "failed") << r.dump();
    // What is on disk is still readable up to its last complete row.
    EXPECT_FALSE(liftlab::read_metrics_csv(run_dir + "/metrics.csv").empty());
}
