#include "nn/torchscript_archive.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <new>

namespace liftlab {

namespace {

// Signatures of the zip format's records.
constexpr uint64_t kEndOfDirectory = 0x06054b50;
constexpr uint64_t kZip64Locator = 0x07064b50;
constexpr uint64_t kZip64End = 0x06064b50;
constexpr uint64_t kCentralRecord = 0x02014b50;
constexpr uint64_t kLocalHeader = 0x04034b50;
constexpr size_t kEndOfDirectoryBytes = 22;
constexpr size_t kCentralRecordBytes = 46;
constexpr size_t kLocalHeaderBytes = 30;

// Where the end-of-directory record starts (it may be followed by a comment of up to 64 kB), or
// npos.
size_t find_end_of_directory(const std::string& b) {
    if (b.size() < kEndOfDirectoryBytes) return std::string::npos;
    const size_t lowest =
        b.size() > kEndOfDirectoryBytes + 65535 ? b.size() - kEndOfDirectoryBytes - 65535 : 0;
    for (size_t at = b.size() - kEndOfDirectoryBytes + 1; at-- > lowest;)
        if (little_endian_at(b, at, 4) == kEndOfDirectory) return at;
    return std::string::npos;
}

// zip64 sizes and offset live in the extra field (id 1): uncompressed size first, then the
// compressed size, then the local header's offset, each only when its 32-bit field is all ones.
void read_zip64_extra(const std::string& b, size_t from, size_t end, ZipEntry& e) {
    for (size_t x = from; x + 4 <= end;) {
        const size_t id = little_endian_at(b, x, 2), len = little_endian_at(b, x + 2, 2);
        if (x + 4 + len > end) break;
        if (id == 1) {
            size_t f = x + 4;
            if (e.size == 0xFFFFFFFF && f + 8 <= x + 4 + len)
                e.size = little_endian_at(b, f, 8), f += 8;
            if (e.stored == 0xFFFFFFFF && f + 8 <= x + 4 + len)
                e.stored = little_endian_at(b, f, 8), f += 8;
            if (e.local_header == 0xFFFFFFFF && f + 8 <= x + 4 + len)
                e.local_header = little_endian_at(b, f, 8);
        }
        x += 4 + len;
    }
}

}  // namespace

uint64_t little_endian_at(const std::string& b, size_t at, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    return v;
}

std::vector<ZipEntry> read_zip_entries(const std::string& b, bool& damaged) {
    damaged = false;
    const size_t eocd = find_end_of_directory(b);
    if (eocd == std::string::npos) return {};
    const auto refuse = [&damaged] {
        damaged = true;
        return std::vector<ZipEntry>{};
    };
    uint64_t count = little_endian_at(b, eocd + 10, 2), offset = little_endian_at(b, eocd + 16, 4);
    // One disk: its entry count is the archive's (LibTorch's miniz reads one, we the other).
    if (little_endian_at(b, eocd + 8, 2) != count) return refuse();
    // zip64: a locator right before the record, then its own end record. LibTorch's miniz takes
    // the zip64 record's count and offset whenever both are there, whatever the record above
    // says (found by fuzzing: a zeroed record above a zip64 one left us nothing to check), so
    // a locator is followed the same way, and one that leads nowhere is refused.
    if (eocd >= 20 && little_endian_at(b, eocd - 20, 4) == kZip64Locator) {
        const uint64_t end64 = little_endian_at(b, eocd - 20 + 8, 8);
        if (end64 > b.size() || b.size() - end64 < 56 || little_endian_at(b, end64, 4) != kZip64End)
            return refuse();
        count = little_endian_at(b, end64 + 32, 8);
        if (little_endian_at(b, end64 + 24, 8) != count) return refuse();
        offset = little_endian_at(b, end64 + 48, 8);
    }
    std::vector<ZipEntry> out;
    uint64_t at = offset;
    for (uint64_t i = 0; i < count; ++i) {
        if (at > b.size() || b.size() - at < kCentralRecordBytes ||
            little_endian_at(b, at, 4) != kCentralRecord)
            return refuse();
        ZipEntry e;
        e.method = static_cast<int>(little_endian_at(b, at + 10, 2));
        e.stored = little_endian_at(b, at + 20, 4);
        e.size = little_endian_at(b, at + 24, 4);
        e.local_header = little_endian_at(b, at + 42, 4);
        e.central = at;
        const size_t name_len = little_endian_at(b, at + 28, 2),
                     extra_len = little_endian_at(b, at + 30, 2),
                     comment_len = little_endian_at(b, at + 32, 2);
        if (b.size() - at - kCentralRecordBytes < name_len + extra_len + comment_len)
            return refuse();
        const size_t name_at = at + kCentralRecordBytes;
        e.name = b.substr(name_at, name_len);
        read_zip64_extra(b, name_at + name_len, name_at + name_len + extra_len, e);
        out.push_back(std::move(e));
        at += kCentralRecordBytes + name_len + extra_len + comment_len;
    }
    return out;
}

ZipEntryBytes read_zip_entry(const std::string& b, const ZipEntry& e) {
    ZipEntryBytes out;
    const uint64_t h = e.local_header;
    if (h > b.size() || b.size() - h < kLocalHeaderBytes ||
        little_endian_at(b, h, 4) != kLocalHeader)
        return out;
    const uint64_t data =
        h + kLocalHeaderBytes + little_endian_at(b, h + 26, 2) + little_endian_at(b, h + 28, 2);
    if (data > b.size() || b.size() - data < e.stored) return out;
    if (e.method == 0) {
        out.status = ZipEntryBytes::Status::ok;
        out.bytes = b.substr(data, e.stored);
        return out;
    }
    if (e.method != 8) return out;
    out.bytes.assign(e.size, '\0');
    z_stream z{};
    if (inflateInit2(&z, -15) != Z_OK) throw std::bad_alloc();
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(b.data() + data));
    z.avail_in = static_cast<uInt>(std::min<uint64_t>(e.stored, UINT32_MAX));
    z.next_out = reinterpret_cast<Bytef*>(out.bytes.data());
    z.avail_out = static_cast<uInt>(std::min<uint64_t>(out.bytes.size(), UINT32_MAX));
    const int rc = inflate(&z, Z_FINISH);
    const uint64_t produced = z.total_out;
    inflateEnd(&z);
    out.status = rc == Z_STREAM_END && produced == e.size ? ZipEntryBytes::Status::ok
                                                          : ZipEntryBytes::Status::damaged;
    return out;
}

void hide_debug_pickles(std::string& b, const std::vector<ZipEntry>& entries) {
    const std::string suffix = ".debug_pkl";
    for (const auto& e : entries) {
        if (!has_suffix(ascii_lower(e.name), suffix)) continue;
        const size_t name_len = e.name.size();
        b.replace(e.central + kCentralRecordBytes + name_len - 3, 3, "off");
        const uint64_t h = e.local_header;
        if (h <= b.size() && b.size() - h >= kLocalHeaderBytes &&
            little_endian_at(b, h + 26, 2) == name_len &&
            b.size() - h - kLocalHeaderBytes >= name_len &&
            ascii_lower(b.substr(h + kLocalHeaderBytes, name_len)) == ascii_lower(e.name))
            b.replace(h + kLocalHeaderBytes + name_len - 3, 3, "off");
    }
}

std::string ascii_lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool has_suffix(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace liftlab
