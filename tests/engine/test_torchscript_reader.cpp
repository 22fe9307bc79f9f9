// The TorchScript reader's parts on their own, with small generated inputs (the whole reader,
// through load_torchscript, is in test_torchscript_models.cpp): the zip container
// (nn/torchscript_archive.h), the checks of a file before LibTorch reads it
// (nn/torchscript_archive_check.h), the code check (nn/torchscript_code_check.h) and the checks
// of a loaded module's tensors (nn/torchscript_tensor_check.h). The pickle check has its own file
// (test_torchscript_pickle.cpp).
#include <gtest/gtest.h>
#include <torch/script.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "nn/torchscript_archive.h"
#include "nn/torchscript_archive_check.h"
#include "nn/torchscript_code_check.h"
#include "nn/torchscript_tensor_check.h"
#include "test_helpers.h"

namespace liftlab {
namespace {

// `v` as `n` little-endian bytes.
std::string le_bytes(uint64_t v, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
}

std::string deflate_raw(const std::string& data) {
    z_stream z{};
    EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::string out(deflateBound(&z, data.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

struct TestEntry {
    std::string name;
    std::string data;
    bool deflated = false;
    bool zip64 = false;  // sizes 0xFFFFFFFF in the directory, the real ones in a zip64 extra field
};

// A zip archive of `entries` as the format describes it (local headers, central directory, end
// record), written here independently of the reader under test.
std::string make_zip(const std::vector<TestEntry>& entries) {
    std::string local, central;
    for (const auto& e : entries) {
        const std::string data = e.deflated ? deflate_raw(e.data) : e.data;
        const uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(e.data.data()),
                                   static_cast<uInt>(e.data.size()));
        const int method = e.deflated ? 8 : 0;
        std::string extra;
        if (e.zip64)
            extra = le_bytes(1, 2) + le_bytes(16, 2) + le_bytes(e.data.size(), 8) +
                    le_bytes(data.size(), 8);
        const uint64_t stored = e.zip64 ? 0xFFFFFFFF : data.size();
        const uint64_t size = e.zip64 ? 0xFFFFFFFF : e.data.size();
        const uint64_t offset = local.size();
        local += le_bytes(0x04034b50, 4) + le_bytes(20, 2) + le_bytes(0, 2) + le_bytes(method, 2) +
                 le_bytes(0, 4) + le_bytes(crc, 4) + le_bytes(data.size(), 4) +
                 le_bytes(e.data.size(), 4) + le_bytes(e.name.size(), 2) + le_bytes(0, 2) + e.name +
                 data;
        central += le_bytes(0x02014b50, 4) + le_bytes(20, 2) + le_bytes(20, 2) + le_bytes(0, 2) +
                   le_bytes(method, 2) + le_bytes(0, 4) + le_bytes(crc, 4) + le_bytes(stored, 4) +
                   le_bytes(size, 4) + le_bytes(e.name.size(), 2) + le_bytes(extra.size(), 2) +
                   le_bytes(0, 2) + le_bytes(0, 2) + le_bytes(0, 2) + le_bytes(0, 4) +
                   le_bytes(offset, 4) + e.name + extra;
    }
    const std::string end = le_bytes(0x06054b50, 4) + le_bytes(0, 2) + le_bytes(0, 2) +
                            le_bytes(entries.size(), 2) + le_bytes(entries.size(), 2) +
                            le_bytes(central.size(), 4) + le_bytes(local.size(), 4) +
                            le_bytes(0, 2);
    return local + central + end;
}

std::vector<ZipEntry> entries_of(const std::string& zip) {
    bool damaged = true;
    auto entries = read_zip_entries(zip, damaged);
    EXPECT_FALSE(damaged);
    return entries;
}

TEST(TorchScriptArchive, ReadsTheEntriesOfAGeneratedArchive) {
    const std::string code(3000, 'x');  // deflates to a few bytes
    const std::string zip = make_zip({{"m/data.pkl", "hello"}, {"m/code/f.py", code, true}});
    const auto entries = entries_of(zip);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].name, "m/data.pkl");
    EXPECT_EQ(entries[0].method, 0);
    EXPECT_EQ(entries[0].size, 5u);
    EXPECT_EQ(entries[0].local_header, 0u);
    EXPECT_EQ(entries[1].name, "m/code/f.py");
    EXPECT_EQ(entries[1].method, 8);
    EXPECT_EQ(entries[1].size, code.size());
    EXPECT_LT(entries[1].stored, 100u);
    EXPECT_EQ(little_endian_at(zip, entries[1].central, 4), 0x02014b50u);
    for (const auto& [entry, want] :
         {std::pair{entries[0], std::string("hello")}, std::pair{entries[1], code}}) {
        const auto got = read_zip_entry(zip, entry);
        EXPECT_EQ(got.status, ZipEntryBytes::Status::ok) << entry.name;
        EXPECT_EQ(got.bytes, want) << entry.name;
    }
}

TEST(TorchScriptArchive, Zip64SizesComeFromTheExtraField) {
    const std::string data(1000, 'z');
    const auto entries = entries_of(make_zip({{"m/big.pkl", data, true, true}}));
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].size, data.size());
    EXPECT_EQ(entries[0].stored, deflate_raw(data).size());
}

TEST(TorchScriptArchive, NotAZipArchiveHasNoEntriesAndIsNotDamaged) {
    for (const std::string& bytes : {std::string(), std::string("hello"), std::string(100, 'a')}) {
        bool damaged = true;
        EXPECT_TRUE(read_zip_entries(bytes, damaged).empty());
        EXPECT_FALSE(damaged);
    }
}

TEST(TorchScriptArchive, ADirectoryThatDoesNotReadAsItDeclaresIsDamaged) {
    const std::string zip = make_zip({{"m/a.pkl", "abc"}, {"m/b.pkl", "def"}});
    const size_t eocd = zip.rfind(le_bytes(0x06054b50, 4));
    ASSERT_NE(eocd, std::string::npos);
    auto damaged_after = [&](auto patch) {
        std::string b = zip;
        patch(b);
        bool damaged = false;
        const auto entries = read_zip_entries(b, damaged);
        EXPECT_TRUE(entries.empty());
        return damaged;
    };
    // The disk's entry count differs from the archive's.
    EXPECT_TRUE(damaged_after([&](std::string& b) { b[eocd + 10] = 3; }));
    // Both counts one more than the directory holds: the third record's signature is not there.
    EXPECT_TRUE(damaged_after([&](std::string& b) { b[eocd + 8] = b[eocd + 10] = 3; }));
    // The directory's offset one byte off.
    EXPECT_TRUE(damaged_after([&](std::string& b) { b[eocd + 16] += 1; }));
    // A name longer than what is left of the file.
    EXPECT_TRUE(damaged_after([&](std::string& b) {
        const size_t central = little_endian_at(b, eocd + 16, 4);
        b.replace(central + 28, 2, le_bytes(60000, 2));
    }));
    // A zip64 locator whose end record lies past the file.
    EXPECT_TRUE(damaged_after([&](std::string& b) {
        b.insert(eocd,
                 le_bytes(0x07064b50, 4) + le_bytes(0, 4) + le_bytes(1u << 30, 8) + le_bytes(1, 4));
    }));
}

TEST(TorchScriptArchive, AnEntryIsReadOnlyWhenItsHeaderAndDataAreWhereItSays) {
    const std::string text(500, 'q');
    const std::string zip = make_zip({{"m/code/f.py", text, true}});
    const ZipEntry entry = entries_of(zip).at(0);
    ZipEntry e = entry;
    e.size += 1;  // inflates to one byte less than declared
    EXPECT_EQ(read_zip_entry(zip, e).status, ZipEntryBytes::Status::damaged);
    std::string garbage = zip;
    garbage[30 + entry.name.size()] = '\xff';  // a reserved block type
    EXPECT_EQ(read_zip_entry(garbage, entry).status, ZipEntryBytes::Status::damaged);
    e = entry;
    e.local_header = zip.size() - 10;
    EXPECT_EQ(read_zip_entry(zip, e).status, ZipEntryBytes::Status::unreadable);
    e = entry;
    e.stored = zip.size();
    EXPECT_EQ(read_zip_entry(zip, e).status, ZipEntryBytes::Status::unreadable);
    e = entry;
    e.method = 12;  // bzip2
    EXPECT_EQ(read_zip_entry(zip, e).status, ZipEntryBytes::Status::unreadable);
}

TEST(TorchScriptArchive, DebugPicklesAreHiddenWithoutMovingAnything) {
    std::string zip = make_zip({{"m/code/__torch__.py.debug_pkl", "debug"},
                                {"m/code/__torch__.py", "code"},
                                {"m/code/Other.PY.DEBUG_PKL", "debug2"}});
    const std::string before = zip;
    hide_debug_pickles(zip, entries_of(zip));
    ASSERT_EQ(zip.size(), before.size());
    const auto entries = entries_of(zip);
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0].name, "m/code/__torch__.py.debug_off");
    EXPECT_EQ(entries[1].name, "m/code/__torch__.py");
    EXPECT_EQ(entries[2].name, "m/code/Other.PY.DEBUG_off");
    // The local headers renamed too, and every entry's data where it was.
    EXPECT_EQ(zip.substr(30, entries[0].name.size()), entries[0].name);
    EXPECT_EQ(read_zip_entry(zip, entries[0]).bytes, "debug");
    EXPECT_EQ(read_zip_entry(zip, entries[1]).bytes, "code");
    size_t differing = 0;
    for (size_t i = 0; i < zip.size(); ++i) differing += zip[i] != before[i];
    EXPECT_EQ(differing, 2u * 2u * 3u);  // 3 bytes, in the directory and the local header, of 2
}

TEST(TorchScriptArchiveCheck, DeclaredSizesAreBoundedByTheFile) {
    const uint64_t file = 1000;
    const uint64_t bound = 8 * file + (uint64_t{16} << 20);
    std::vector<ZipEntry> entries(2);
    entries[0].name = "m/data.pkl";
    entries[1].name = "m/code/f.py";
    entries[0].size = bound / 2;
    entries[1].size = bound - bound / 2;
    EXPECT_NO_THROW(check_declared_sizes(entries, file, "f.pt", "backbone.script"));
    entries[1].size += 1;
    try {
        check_declared_sizes(entries, file, "f.pt", "backbone.script");
        FAIL() << "one byte over the bound passed";
    } catch (const SpecError& e) {
        EXPECT_EQ(e.key(), "backbone.script");
        EXPECT_NE(std::string(e.what()).find("its entry 'm/code/f.py' declares"), std::string::npos)
            << e.what();
    }
}

// The SpecError message of check_archive_entries for `entries`, or "" when it passes.
std::string entries_problem(const std::vector<TestEntry>& entries) {
    const std::string zip = make_zip(entries);
    try {
        check_archive_entries(entries_of(zip), zip, "m.pt", "icnn.script");
    } catch (const SpecError& e) {
        EXPECT_EQ(e.key(), "icnn.script");
        return e.what();
    }
    return {};
}

TEST(TorchScriptArchiveCheck, EveryPickleAndCodeFileIsChecked) {
    // PROTO 2, a storage id ('storage', torch.FloatStorage, '0', 'cpu', 4), BINPERSID, STOP.
    auto unicode = [](const std::string& text) { return "X" + le_bytes(text.size(), 4) + text; };
    const std::string storage = "\x80\x02(" + unicode("storage") + "ctorch\nFloatStorage\n" +
                                unicode("0") + unicode("cpu") + "K\x04tQ.";
    EXPECT_EQ(entries_problem({{"m/data.pkl", storage}, {"m/data/0", std::string(16, '\0')}}), "");
    // Its record found with the case ignored, as LibTorch finds it: 12 bytes hold 3 floats.
    EXPECT_NE(entries_problem({{"m/data.pkl", storage}, {"M/DATA/0", std::string(12, '\0')}})
                  .find("its pickle 'm/data.pkl' is damaged (a tensor storage of 4 elements of "
                        "4 bytes where its record '0' holds 12 bytes"),
              std::string::npos);
    // A deflated pickle is inflated first; its kind is found with the case ignored.
    EXPECT_NE(entries_problem({{"m/CONSTANTS.PKL", std::string("(\x87.", 3), true}})
                  .find("its pickle 'm/CONSTANTS.PKL' is damaged (it takes 3 values"),
              std::string::npos);
    EXPECT_NE(entries_problem({{"m/code/__torch__/m.py", "class M(Module):\n  k = 1\n"}})
                  .find("its code 'm/code/__torch__/m.py' is damaged (line 2: a class constant "
                        "'k'"),
              std::string::npos);
    // Any other entry is read only to check its deflate stream.
    EXPECT_EQ(entries_problem({{"m/data/0", std::string("(\x87.", 3)}}), "");
    const std::string zip = make_zip({{"m/data/0", std::string(64, '\0'), true}});
    auto entries = entries_of(zip);
    entries[0].size = 65;
    EXPECT_THROW(check_archive_entries(entries, zip, "m.pt", "icnn.script"), SpecError);
}

TEST(TorchScriptArchiveCheck, TheFileIsReadBoundedAndItsHashChecked) {
    test::TempDir dir;
    const std::string path = dir.write("m.pt", make_zip({{"m/data.pkl", "N."}}));
    const CheckedArchive archive = read_checked_archive(path, "backbone.script");
    EXPECT_EQ(archive.sha256.size(), 64u);
    ASSERT_EQ(archive.entries.size(), 1u);
    EXPECT_EQ(archive.entries[0].name, "m/data.pkl");
    EXPECT_NO_THROW(read_checked_archive(path, "backbone.script", archive.sha256));
    try {
        check_torchscript_archive(path, "backbone.script", std::string(64, '0'));
        FAIL() << "another SHA-256 passed";
    } catch (const SpecError& e) {
        EXPECT_EQ(e.key(), "backbone.script_sha256");
    }
    // Not a zip archive: no entries, left to LibTorch's reader to refuse.
    EXPECT_TRUE(read_checked_archive(dir.write("text.pt", "plain text"), "k").entries.empty());
    EXPECT_THROW(check_torchscript_archive(dir.file("missing.pt"), "k"), SpecError);
    EXPECT_THROW(check_torchscript_archive(dir.str(), "k"), SpecError);  // a folder
}

TEST(TorchScriptCodeCheck, AClassConstantNeedsItsFinalAnnotation) {
    const std::string module_code =
        "class Model(Module):\n"
        "  __parameters__ = [\"w\", ]\n"
        "  __buffers__ = []\n"
        "  w : Tensor\n"
        "  scale : Final[float] = 2.\n"
        "  def forward(self: __torch__.Model, x: Tensor) -> Tensor:\n"
        "    y = torch.mul(x, self.scale)\n"
        "    if y == y:\n"
        "      z = y\n"
        "    return y\n";
    EXPECT_EQ(code_problem(module_code), "");
    EXPECT_EQ(code_problem("class Colour(Enum):\n  RED = 1\n  GREEN = 2\n"), "");
    EXPECT_EQ(code_problem("x = 1\ndef f(a):\n  b = a\n  return b\n"), "");
    EXPECT_EQ(code_problem("class M(Module):\n  # k = 1\n\n  n == 2\n"), "");
    EXPECT_EQ(code_problem(module_code + "class Other(Module):\n  k = 3\n"),
              "line 12: a class constant 'k' without its Final[…] annotation");
    EXPECT_EQ(code_problem("class M(Module):\n\tlimit\t= 4\n"),
              "line 2: a class constant 'limit' without its Final[…] annotation");
}

// `t` seen with `sizes`, `strides` and `offset`, set without LibTorch's checks (as its unpickler
// sets what a pickle declares).
at::Tensor restrided(at::Tensor t, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                     int64_t offset) {
    t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides);
    t.unsafeGetTensorImpl()->set_storage_offset(offset);
    return t;
}

TEST(TorchScriptTensorCheck, AViewMustStayInsideItsStorage) {
    EXPECT_EQ(tensor_problem("w", torch::ones({3, 4})), "");
    EXPECT_EQ(tensor_problem("w", at::Tensor()), "");
    EXPECT_EQ(tensor_problem("w", torch::ones({0, 4})), "");
    // 12 floats: a 2 × 3 view with strides (6, 2) from offset 1 reaches element 1 + 6 + 4 = 11.
    EXPECT_EQ(tensor_problem("w", restrided(torch::ones({12}), {2, 3}, {6, 2}, 1)), "");
    const std::string past = tensor_problem("w", restrided(torch::ones({12}), {2, 3}, {6, 2}, 2));
    EXPECT_NE(past.find("tensor 'w' of sizes [2, 3], strides [6, 2] and offset 2 reaches past "
                        "its storage of 48 bytes"),
              std::string::npos)
        << past;
    // A 2 × 2 view with strides (0, 3) from offset 0: element 3 of a 3-element storage is past it.
    EXPECT_NE(tensor_problem("b", restrided(torch::ones({3}), {2, 2}, {0, 3}, 0)), "");
    EXPECT_NE(tensor_problem("w", torch::ones({2, 2}).to_sparse()).find("'w' is a sparse tensor"),
              std::string::npos);
}

TEST(TorchScriptTensorCheck, EveryTensorOfTheModuleIsChecked) {
    torch::jit::Module m("Model");
    m.register_parameter("w", torch::ones({2, 2}), false);
    torch::jit::Module inner("Inner");
    inner.register_buffer("b", torch::zeros({3}));
    m.register_module("inner", inner);
    EXPECT_EQ(module_tensor_problem(m), "");
    c10::List<at::Tensor> list;
    list.push_back(torch::ones({2}));
    list.push_back(restrided(torch::ones({2}), {3}, {1}, 0));
    m.register_attribute("history", c10::ListType::ofTensors(), list);
    EXPECT_NE(module_tensor_problem(m).find("tensor 'history' of sizes [3]"), std::string::npos)
        << module_tensor_problem(m);
    torch::jit::Module other("Other");
    torch::jit::Module nested("Nested");
    nested.register_buffer("table", restrided(torch::ones({4}), {5}, {1}, 0));
    other.register_module("sub", nested);
    EXPECT_NE(module_tensor_problem(other).find("tensor 'sub.table'"), std::string::npos)
        << module_tensor_problem(other);
}

}  // namespace
}  // namespace liftlab
