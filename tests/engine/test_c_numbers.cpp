// Numbers in files never depend on the locale (issue 36): core/c_numbers.h against printf and
// strtod in the "C" locale (the reference), and the engine's writers and readers — the run
// folder's CSV files, a user's CSV data set, --set, JSON — with the C library's locale set to
// comma-decimal ones, as Qt sets it from LC_ALL=de_DE.UTF-8. No belt here: the front ends also
// put LC_NUMERIC back to "C", the engine must not need it.
#include <gtest/gtest.h>

#include <clocale>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include "core/c_numbers.h"
#include "data/csv_table.h"
#include "run/run_store.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "test_helpers.h"
#include "training/runner.h"

namespace {

using liftlab::c_fixed;
using liftlab::c_general;
using liftlab::c_parse_double;
using liftlab::c_parse_int;
using liftlab::c_parse_uint64;
using liftlab::c_shortest;

// The comma-decimal locales of the tests (scripts/install-deps.sh generates them).
const char* const kCommaLocales[] = {"de_DE.UTF-8", "fr_FR.UTF-8"};

// The C library's whole locale set to `name` while the object lives, then the previous one.
class ScopedLocale {
public:
    explicit ScopedLocale(const char* name) : previous_(std::setlocale(LC_ALL, nullptr)) {
        ok_ = std::setlocale(LC_ALL, name) != nullptr;
    }
    ~ScopedLocale() { std::setlocale(LC_ALL, previous_.c_str()); }
    // The locale is in effect and really writes a decimal comma (the test's premise).
    ::testing::AssertionResult active() const {
        if (!ok_)
            return ::testing::AssertionFailure()
                   << "locale not installed: run scripts/install-deps.sh (it generates it)";
        char probe[16];
        std::snprintf(probe, sizeof probe, "%g", 0.5);
        if (std::strcmp(probe, "0,5") != 0)
            return ::testing::AssertionFailure() << "printf writes '" << probe << "', not 0,5";
        return ::testing::AssertionSuccess();
    }

private:
    std::string previous_;
    bool ok_ = false;
};

std::string printf_c(const char* format, int precision, double v) {
    ScopedLocale c("C");
    char buf[512];
    std::snprintf(buf, sizeof buf, format, precision, v);
    return buf;
}

uint64_t bits(double v) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

// Doubles of every kind: seeded random bit patterns (all exponents), subnormals, the extremes,
// signed zeros, infinities, round decimals.
std::vector<double> sample_doubles() {
    std::vector<double> out = {0.0,
                               -0.0,
                               0.5,
                               0.1,
                               -2.5e-7,
                               1e21,
                               123456789012.0,
                               std::numeric_limits<double>::max(),
                               std::numeric_limits<double>::lowest(),
                               std::numeric_limits<double>::min(),
                               std::numeric_limits<double>::denorm_min(),
                               9.9998886718268301e-321,
                               std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity()};
    std::mt19937_64 rng(36);
    while (out.size() < 20000) {
        double v;
        const uint64_t b = rng();
        std::memcpy(&v, &b, sizeof v);
        if (std::isfinite(v)) out.push_back(v);
    }
    std::uniform_real_distribution<double> unit(-10, 10);
    for (int i = 0; i < 2000; ++i) out.push_back(unit(rng));
    return out;
}

}  // namespace

// Subnormals are values here (set_compute_threads, run by other tests of this process, flushes
// them to zero).
TEST(CNumbers, ShortestReadsBackToTheSameBits) {
    liftlab::test::KeepSubnormals keep;
    for (double v : sample_doubles()) {
        const std::string text = c_shortest(v);
        double back = 1;
        ASSERT_TRUE(c_parse_double(text, &back)) << text;
        ASSERT_EQ(bits(back), bits(v)) << text;
        ASSERT_EQ(text.find(','), std::string::npos) << text;
    }
    double nan = 0;
    ASSERT_TRUE(c_parse_double(c_shortest(std::nan("")), &nan));
    EXPECT_TRUE(std::isnan(nan));
}

TEST(CNumbers, GeneralAndFixedAreThoseOfPrintfInTheCLocale) {
    liftlab::test::KeepSubnormals keep;
    const auto values = sample_doubles();
    for (size_t i = 0; i < values.size(); i += 7) {
        const double v = values[i];
        for (int p : {1, 3, 4, 6, 9, 10, 17})
            ASSERT_EQ(c_general(v, p), printf_c("%.*g", p, v)) << v << " %." << p << "g";
        if (std::fabs(v) < 1e30)
            for (int p : {0, 1, 2, 4})
                ASSERT_EQ(c_fixed(v, p), printf_c("%.*f", p, v)) << v << " %." << p << "f";
    }
    EXPECT_EQ(c_fixed(std::numeric_limits<double>::max(), 2),
              printf_c("%.*f", 2, std::numeric_limits<double>::max()));
    EXPECT_EQ(c_general(0.52982264518737798, 17), "0.52982264518737798");
}

TEST(CNumbers, ParsersAreStrict) {
    liftlab::test::KeepSubnormals keep;
    double d = 7;
    for (const char* good : {"0.5", "+0.5", "-0.5", ".5", "1.", "1e-3", "1E+3", "nan", "inf",
                             "-inf", "Infinity", "9.9998886718268301e-321"})
        EXPECT_TRUE(c_parse_double(good, &d)) << good;
    EXPECT_TRUE(c_parse_double("0.25", &d));
    EXPECT_EQ(d, 0.25);
    for (const char* bad : {"", " 1", "1 ", "0,5", "1,5", "0x1p3", "0x1F", "1e", "e5", "--1", "+-1",
                            "++1", "+", "-", "1e400", "-1e400", "1.5.2", "abc", "½"})
        EXPECT_FALSE(c_parse_double(bad, &d)) << bad;
    // Below the smallest subnormal: a value (±0); beyond the largest double: refused, and said.
    bool huge = true;
    ASSERT_TRUE(c_parse_double("1e-400", &d, &huge));
    EXPECT_EQ(bits(d), bits(0.0));
    EXPECT_FALSE(huge);
    ASSERT_TRUE(
        c_parse_double("-0.000000000000000000000000000000000000000000000000000000000000"
                       "000000000000000000000000000000000000000000000000000000000000000"
                       "000000000000000000000000000000000000000000000000000000000000000"
                       "000000000000000000000000000000000000000000000000000000000000000"
                       "000000000000000000000000000000000000000000000000000000000000000"
                       "0000000000000000000000000000000000000000000000000000000001",
                       &d));
    EXPECT_EQ(bits(d), bits(-0.0));
    EXPECT_TRUE(c_parse_double("1e-5000000000000000000000", &d));
    EXPECT_FALSE(c_parse_double("1e400", &d, &huge));
    EXPECT_TRUE(huge);
    EXPECT_FALSE(c_parse_double("123456789e99999999999999999999", &d, &huge));
    EXPECT_TRUE(huge);
    EXPECT_FALSE(c_parse_double("abc", &d, &huge));
    EXPECT_FALSE(huge);

    long long i = 0;
    EXPECT_TRUE(c_parse_int("42", 0, 100, &i));
    EXPECT_EQ(i, 42);
    EXPECT_TRUE(c_parse_int("+42", 0, 100, &i));
    EXPECT_TRUE(c_parse_int("-3", -5, 5, &i));
    EXPECT_EQ(i, -3);
    for (const char* bad :
         {"", " 4", "4 ", "4.0", "1e3", "101", "-1", "0x10", "99999999999999999999"})
        EXPECT_FALSE(c_parse_int(bad, 0, 100, &i)) << bad;
    uint64_t u = 0;
    EXPECT_TRUE(c_parse_uint64("18446744073709551615", &u));
    EXPECT_EQ(u, std::numeric_limits<uint64_t>::max());
    for (const char* bad : {"", "-1", "+1", "18446744073709551616", "1.0", " 1"})
        EXPECT_FALSE(c_parse_uint64(bad, &u)) << bad;
}

TEST(CNumbers, NoNumberFollowsACommaDecimalLocale) {
    liftlab::test::KeepSubnormals keep;
    liftlab::test::TempDir dir;
    for (const char* name : kCommaLocales) {
        SCOPED_TRACE(name);
        ScopedLocale locale(name);
        ASSERT_TRUE(locale.active());
        // The module.
        EXPECT_EQ(c_shortest(0.5), "0.5");
        EXPECT_EQ(c_general(1234.5678, 6), "1234.57");
        EXPECT_EQ(c_fixed(0.125, 2), "0.12");
        double d = 0;
        ASSERT_TRUE(c_parse_double("0.5", &d));
        EXPECT_EQ(d, 0.5);
        EXPECT_FALSE(c_parse_double("0,5", &d));
        // JSON (spec.json, summary.json, --set values) is locale-free in nlohmann::json.
        EXPECT_EQ(nlohmann::json(0.5).dump(), "0.5");
        EXPECT_EQ(nlohmann::json::parse("[0.25]")[0].get<double>(), 0.25);

        // The run folder's CSV files, written and read back exactly.
        const std::string run = dir.file(std::string("run-") + name);
        std::filesystem::create_directories(run);
        {
            liftlab::RunStore store(run);
            store.append_metrics({{1, "adam", 0, "test_loss", 0.5}, {1, "adam", 0, "x", 0.1}});
            store.append_spectra({{1, "adam", 0, {2.5, 1e-320}}});
            store.append_traces({{1, "lifter", 0, 3, -1.25}});
            store.close();
        }
        const auto rows = liftlab::read_metrics_csv(run + "/metrics.csv");
        ASSERT_EQ(rows.size(), 2u);
        EXPECT_EQ(rows[0].value, 0.5);
        EXPECT_EQ(rows[1].value, 0.1);
        std::ifstream spectra(run + "/spectra.csv"), traces(run + "/traces.csv");
        std::stringstream s, t;
        s << spectra.rdbuf();
        t << traces.rdbuf();
        EXPECT_EQ(s.str(), "step,method,seed,index,sigma\n1,adam,0,0,2.5\n1,adam,0,1,1e-320\n");
        EXPECT_EQ(t.str(), "step,method,seed,coordinate,value\n1,lifter,0,3,-1.25\n");

        // A user's CSV data set with decimal points.
        const auto table = liftlab::read_csv_table(
            dir.write(std::string("data-") + name + ".csv", "x,y\n0.5,1.25\n-3e-2,2\n"));
        ASSERT_EQ(table.rows.size(), 2u);
        EXPECT_EQ(table.rows[0][0], 0.5);
        EXPECT_EQ(table.rows[0][1], 1.25);
        EXPECT_EQ(table.rows[1][0], -0.03);

        // --set: a decimal value, and a decimal comma refused with the reason.
        auto spec = liftlab::load_spec_source("cf-regression");
        liftlab::apply_override(spec, "methods.cf-prox.lambda=12.5");
        EXPECT_EQ(liftlab::parse_spec(spec).methods.at(3).lambda, 12.5);
        liftlab::apply_override(spec, "methods.cf-prox.lambda=0,5");
        try {
            liftlab::parse_spec(spec);
            ADD_FAILURE() << "0,5 accepted as a number";
        } catch (const liftlab::SpecError& e) {
            EXPECT_NE(std::string(e.what()).find("'.' decimal point"), std::string::npos)
                << e.what();
        }
    }
}

// A whole (small) run in-process under C and the comma-decimal locales: every file of the run
// folder the same bytes, the times aside (rows and finals time_s and solve_fraction).
TEST(CNumbers, ARunsFilesAreTheSameUnderEveryLocale) {
    const auto spec = liftlab::parse_spec(nlohmann::json::parse(R"({
        "name": "locale",
        "task": {"input_dim": 4, "output_dim": 2, "teacher_hidden": [16], "n_train": 256,
                 "n_test": 128, "noise": 0.05},
        "backbone": {"hidden": [16], "feature_dim": 8},
        "methods": [{"name": "adam", "lr": 0.003}, {"name": "cf-prox", "lambda": 2.5}],
        "batch_size": 16, "steps": 20, "log_every": 10, "threads": 1,
        "diagnostics": {"spectrum_every": 10}})"));
    liftlab::test::TempDir dir;
    auto untimed = [](std::string text) {
        std::istringstream in(text);
        std::string line, out;
        while (std::getline(in, line)) {
            for (const char* key : {"time_s", "solve_fraction"}) {
                const std::string csv = std::string(",") + key + ",";
                const std::string json = std::string("\"") + key + "\": ";
                if (line.find(csv) != std::string::npos)
                    line = line.substr(0, line.find(csv) + csv.size()) + "<time>";
                if (line.find(json) != std::string::npos)
                    line = line.substr(0, line.find(json) + json.size()) + "<time>";
            }
            out += line + "\n";
        }
        return out;
    };
    auto files_of = [&](const char* locale_name) {
        ScopedLocale locale(locale_name);
        if (std::strcmp(locale_name, "C") != 0) EXPECT_TRUE(locale.active()) << locale_name;
        liftlab::RunOptions options;
        options.out_dir = dir.file(locale_name);
        const auto result = liftlab::run_experiment(spec, options);
        std::map<std::string, std::string> out;
        for (const char* f : {"metrics.csv", "spectra.csv", "summary.json", "spec.json"}) {
            std::ifstream in(result.run_dir + "/" + f);
            std::stringstream s;
            s << in.rdbuf();
            out[f] = untimed(s.str());
        }
        return out;
    };
    const auto c = files_of("C");
    EXPECT_NE(c.at("metrics.csv").find(",test_loss,0."), std::string::npos);
    for (const char* name : kCommaLocales)
        for (const auto& [file, text] : files_of(name))
            EXPECT_EQ(text, c.at(file)) << name << " " << file;
}
