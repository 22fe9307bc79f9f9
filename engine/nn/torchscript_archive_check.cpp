#include "nn/torchscript_archive_check.h"

#include <algorithm>
#include <map>
#include <optional>

#include "core/bounded_input.h"
#include "core/errors.h"
#include "core/sha256.h"
#include "nn/torchscript_code_check.h"
#include "nn/torchscript_pickle_check.h"

namespace liftlab {

namespace {

// The archive's records by name, case ignored, as LibTorch finds them: it allocates the size the
// directory declares, and with two of one name the smaller counts.
RecordSize record_sizes(const std::vector<ZipEntry>& entries) {
    std::map<std::string, uint64_t> sizes;
    for (const auto& e : entries) {
        const auto [it, fresh] = sizes.emplace(ascii_lower(e.name), e.size);
        if (!fresh) it->second = std::min(it->second, e.size);
    }
    return [sizes = std::move(sizes)](const std::string& name) -> std::optional<uint64_t> {
        const auto it = sizes.find(ascii_lower(name));
        if (it == sizes.end()) return std::nullopt;
        return it->second;
    };
}

}  // namespace

void check_declared_sizes(const std::vector<ZipEntry>& entries, uint64_t file_bytes,
                          const std::string& path, const std::string& key) {
    const uint64_t bound = 8 * file_bytes + (uint64_t{16} << 20);
    uint64_t total = 0;
    for (const auto& e : entries) {
        total += std::min<uint64_t>(e.size, bound + 1);
        if (total > bound)
            throw SpecError(key, path + ": not a TorchScript archive: its entry '" + e.name +
                                     "' declares " + std::to_string(e.size) +
                                     " bytes, more than the " + std::to_string(file_bytes) +
                                     "-byte file can hold (a damaged or hostile file)");
    }
}

void check_archive_entries(const std::vector<ZipEntry>& entries, const std::string& bytes,
                           const std::string& path, const std::string& key) {
    const RecordSize record_size = record_sizes(entries);
    const std::string refused = path + ": not a TorchScript archive: its ";
    for (const auto& e : entries) {
        // LibTorch finds its entries with the case ignored: so are the kinds here.
        const std::string name = ascii_lower(e.name);
        const bool pickle = has_suffix(name, "pkl");
        const bool code = has_suffix(name, ".py");
        if (!pickle && !code && e.method != 8) continue;
        const ZipEntryBytes content = read_zip_entry(bytes, e);
        if (content.status == ZipEntryBytes::Status::damaged)
            throw SpecError(key, refused + "entry '" + e.name + "' does not inflate to its " +
                                     "declared " + std::to_string(e.size) +
                                     " bytes (a damaged file)");
        if (content.status != ZipEntryBytes::Status::ok) continue;
        if (pickle) {
            const std::string records =
                (has_suffix(name, ".pkl") ? e.name.substr(0, e.name.size() - 4) : e.name) + "/";
            const std::string problem = pickle_problem(content.bytes, records, record_size);
            if (!problem.empty())
                throw SpecError(key,
                                refused + "pickle '" + e.name + "' is damaged (" + problem + ")");
        } else if (code) {
            const std::string problem = code_problem(content.bytes);
            if (!problem.empty())
                throw SpecError(key,
                                refused + "code '" + e.name + "' is damaged (" + problem + ")");
        }
    }
}

CheckedArchive read_checked_archive(const std::string& path, const std::string& key,
                                    const std::string& expected_sha256) {
    CheckedArchive out;
    try {
        out.bytes = read_regular_file(path, kMaxTorchScriptBytes);
    } catch (const DataError& e) {
        throw SpecError(key, e.what());
    }
    out.sha256 = hex_sha256(out.bytes);
    if (!expected_sha256.empty() && expected_sha256 != out.sha256)
        throw SpecError(key + "_sha256", path + " has SHA-256 " + out.sha256 +
                                             ", the spec records " + expected_sha256 +
                                             " (the file changed; remove " + key +
                                             "_sha256 to use it as it is)");
    bool damaged = false;
    out.entries = read_zip_entries(out.bytes, damaged);
    if (damaged)
        throw SpecError(key, path +
                                 ": not a TorchScript archive: its zip directory is damaged (its "
                                 "entry count, offsets or signatures do not match)");
    check_declared_sizes(out.entries, out.bytes.size(), path, key);
    check_archive_entries(out.entries, out.bytes, path, key);
    return out;
}

void check_torchscript_archive(const std::string& path, const std::string& key,
                               const std::string& expected_sha256) {
    read_checked_archive(path, key, expected_sha256);
}

}  // namespace liftlab
