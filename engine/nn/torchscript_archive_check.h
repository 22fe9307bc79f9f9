// load_torchscript's own checks of a TorchScript file, before any LibTorch code sees its bytes
// (nn/torchscript_module.h): the file, its zip directory, the sizes it declares, and every entry
// LibTorch would read (the pickles, the code). No LibTorch here: the model probe runs them in the
// calling process before it starts a child (training/model_probe.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/torchscript_archive.h"

namespace liftlab {

// At most this large: a TorchScript archive of a model this lab trains on 2 cores.
constexpr std::uint64_t kMaxTorchScriptBytes = std::uint64_t{1} << 30;

// A file that passed the checks: its bytes, their SHA-256 and its zip entries.
struct CheckedArchive {
    std::string bytes;
    std::string sha256;
    std::vector<ZipEntry> entries;
};

// Reads `path` and checks it: a regular file of at most kMaxTorchScriptBytes (its SHA-256
// `expected_sha256`, when given: SpecError on key + "_sha256" otherwise) holding a zip archive
// whose directory reads as it declares, whose entries declare sizes the file can hold
// (check_declared_sizes) and whose entries pass check_archive_entries. Throws SpecError(key,
// "<path>: what is wrong"). A file that is not a zip archive at all passes (with no entries):
// LibTorch's reader then says so.
CheckedArchive read_checked_archive(const std::string& path, const std::string& key,
                                    const std::string& expected_sha256 = "");

// read_checked_archive, for callers that need only its verdict: what a file fails here it fails
// in load_torchscript with the same SpecError.
void check_torchscript_archive(const std::string& path, const std::string& key,
                               const std::string& expected_sha256 = "");

// LibTorch inflates every entry to the size the archive declares before looking at it: a
// damaged size field (or a zip bomb) would have it allocate, compile and print hundreds of
// megabytes (found by fuzzing: a 13 kB file held LiftLab for 19 s). PyTorch stores its
// archives' entries uncompressed; a repacked archive may deflate them, which real tensors and
// code survive at a few times their size. So the declared total may be at most 8 × the file
// plus 16 MiB; past that, SpecError naming the entry that crosses it.
void check_declared_sizes(const std::vector<ZipEntry>& entries, uint64_t file_bytes,
                          const std::string& path, const std::string& key);

// Every deflated entry must inflate to its declared size, every pickle of the archive (data.pkl,
// constants.pkl, the code's debug pickles) pass pickle_problem (nn/torchscript_pickle_check.h)
// and every code file code_problem (nn/torchscript_code_check.h); SpecError naming the entry
// otherwise. Entries are found as LibTorch finds them, with the case of their names ignored.
void check_archive_entries(const std::vector<ZipEntry>& entries, const std::string& bytes,
                           const std::string& path, const std::string& key);

}  // namespace liftlab
