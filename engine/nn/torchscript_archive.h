// The zip container of a TorchScript file, read (and patched) by LiftLab itself before LibTorch
// sees it: the central directory, each entry's bytes, and the renaming of the debug pickles.
// No LibTorch here (zlib only). The checks built on it are in nn/torchscript_archive_check.h.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace liftlab {

// The little-endian unsigned number of `bytes` bytes (1 to 8) at `at` of `b`; the caller has
// checked that they lie inside `b`. The zip format's fields and the pickles' arguments.
uint64_t little_endian_at(const std::string& b, size_t at, int bytes);

// A zip archive's entry as its central directory declares it.
struct ZipEntry {
    std::string name;
    uint64_t stored = 0;        // its data's (compressed) size
    uint64_t size = 0;          // its uncompressed size
    uint64_t local_header = 0;  // offset of the entry's local header
    uint64_t central = 0;       // offset of its central directory record
    int method = 0;             // 0 stored, 8 deflated
};

// The entries of the zip archive `b`, zip64 sizes and offsets resolved. Empty with `damaged`
// false when there is no end-of-directory record (not a zip archive: LibTorch's reader then says
// so); empty with `damaged` true when there is one but the directory does not read as it declares
// (its two entry counts differ, a zip64 locator leads nowhere, a record's signature or length is
// wrong: LibTorch's lenient reader would go on with it — found by fuzzing). LibTorch's miniz
// takes the zip64 record's count and offset whenever there is one, and so does this.
std::vector<ZipEntry> read_zip_entries(const std::string& b, bool& damaged);

// An entry's bytes, as read_zip_entry returns them.
struct ZipEntryBytes {
    enum class Status {
        ok,          // `bytes` holds the entry
        unreadable,  // its local header or data lie outside the file, or its method is neither
                     // stored nor deflated (LibTorch's reader then says what is wrong)
        damaged,     // deflated data that do not inflate to the declared size (LibTorch's miniz
                     // would read such a stream differently: found by fuzzing)
    };
    Status status = Status::unreadable;
    std::string bytes;
};

// The bytes of entry `e` of archive `b`: stored as they are, or inflated (raw deflate) into the
// size the directory declares, which the caller has bounded (check_declared_sizes).
ZipEntryBytes read_zip_entry(const std::string& b, const ZipEntry& e);

// Renames, in place, every entry of `b` whose name ends with ".debug_pkl" (case ignored) to end
// with ".debug_off", in its central directory record and, when it matches, its local header:
// LibTorch then does not find the archive's debug pickles (`code/….py.debug_pkl`: where each line
// of the code came from in the user's Python file). LibTorch 1.13 indexes their string table
// without checking the index (found by fuzzing: a damaged one crashed LiftLab as it formatted an
// error); without them its messages name the archive's own code lines. The sizes and offsets of
// the archive do not change. `entries` are b's (read_zip_entries).
void hide_debug_pickles(std::string& b, const std::vector<ZipEntry>& entries);

// Lower-case ASCII of `s`: LibTorch finds an archive's records with the case ignored.
std::string ascii_lower(std::string s);

// `s` ends with `suffix`.
bool has_suffix(const std::string& s, const std::string& suffix);

}  // namespace liftlab
