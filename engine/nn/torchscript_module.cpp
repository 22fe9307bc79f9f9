#include "nn/torchscript_module.h"

#include "nn/torchscript_inspect.h"

#include <torch/csrc/jit/frontend/error_report.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "core/activity.h"
#include "core/bounded_input.h"
#include "core/error_text.h"
#include "core/errors.h"
#include "core/sha256.h"

namespace liftlab {

namespace {

// Little-endian fields of the zip format, bounds-checked by the callers.
uint64_t zip_le(const std::string& b, size_t at, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    return v;
}

// A zip archive's entries as its central directory declares them: name, stored (compressed)
// size, uncompressed size, where its data are. Empty when there is no end-of-directory record
// (not a zip archive: LibTorch's reader then says so); `damaged` when there is one but the
// directory does not read as it declares (a count, an offset or a signature that does not match:
// LibTorch's lenient reader would go on with it — found by fuzzing).
struct ZipEntry {
    std::string name;
    uint64_t stored = 0, size = 0;
    uint64_t local_header = 0;  // offset of the entry's local header
    uint64_t central = 0;       // offset of its central directory record
    int method = 0;             // 0 stored, 8 deflated
};
std::vector<ZipEntry> zip_entries(const std::string& b, bool& damaged) {
    damaged = false;
    constexpr size_t kEocd = 22;
    if (b.size() < kEocd) return {};
    size_t eocd = std::string::npos;
    const size_t lowest = b.size() > kEocd + 65535 ? b.size() - kEocd - 65535 : 0;
    for (size_t at = b.size() - kEocd + 1; at-- > lowest;)
        if (zip_le(b, at, 4) == 0x06054b50) {
            eocd = at;
            break;
        }
    if (eocd == std::string::npos) return {};
    uint64_t count = zip_le(b, eocd + 10, 2), offset = zip_le(b, eocd + 16, 4);
    // One disk: its entry count is the archive's (LibTorch's miniz reads one, we the other).
    if (zip_le(b, eocd + 8, 2) != count) return damaged = true, std::vector<ZipEntry>{};
    // zip64: a locator right before the record, then its own end record. LibTorch's miniz takes
    // the zip64 record's count and offset whenever both are there, whatever the record above
    // says (found by fuzzing: a zeroed record above a zip64 one left us nothing to check), so
    // a locator is followed the same way, and one that leads nowhere is refused.
    if (eocd >= 20 && zip_le(b, eocd - 20, 4) == 0x07064b50) {
        const uint64_t end64 = zip_le(b, eocd - 20 + 8, 8);
        if (end64 > b.size() || b.size() - end64 < 56 || zip_le(b, end64, 4) != 0x06064b50)
            return damaged = true, std::vector<ZipEntry>{};
        count = zip_le(b, end64 + 32, 8);
        if (zip_le(b, end64 + 24, 8) != count) return damaged = true, std::vector<ZipEntry>{};
        offset = zip_le(b, end64 + 48, 8);
    }
    std::vector<ZipEntry> out;
    size_t at = offset;
    for (uint64_t i = 0; i < count; ++i) {
        if (at > b.size() || b.size() - at < 46 || zip_le(b, at, 4) != 0x02014b50)
            return damaged = true, std::vector<ZipEntry>{};
        ZipEntry e;
        e.method = static_cast<int>(zip_le(b, at + 10, 2));
        e.stored = zip_le(b, at + 20, 4);
        e.size = zip_le(b, at + 24, 4);
        e.local_header = zip_le(b, at + 42, 4);
        e.central = at;
        const size_t name_len = zip_le(b, at + 28, 2), extra_len = zip_le(b, at + 30, 2),
                     comment_len = zip_le(b, at + 32, 2);
        if (b.size() - at - 46 < name_len + extra_len + comment_len)
            return damaged = true, std::vector<ZipEntry>{};
        e.name = b.substr(at + 46, name_len);
        // zip64 sizes live in the extra field (id 1): uncompressed first, then compressed.
        for (size_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
            const size_t id = zip_le(b, x, 2), len = zip_le(b, x + 2, 2);
            if (x + 4 + len > at + 46 + name_len + extra_len) break;
            if (id == 1) {
                size_t f = x + 4;
                if (e.size == 0xFFFFFFFF && f + 8 <= x + 4 + len) e.size = zip_le(b, f, 8), f += 8;
                if (e.stored == 0xFFFFFFFF && f + 8 <= x + 4 + len)
                    e.stored = zip_le(b, f, 8), f += 8;
                if (e.local_header == 0xFFFFFFFF && f + 8 <= x + 4 + len)
                    e.local_header = zip_le(b, f, 8);
            }
            x += 4 + len;
        }
        out.push_back(std::move(e));
        at += 46 + name_len + extra_len + comment_len;
    }
    return out;
}

// LibTorch inflates every entry to the size the archive declares before looking at it: a
// damaged size field (or a zip bomb) would have it allocate, compile and print hundreds of
// megabytes (found by fuzzing: a 13 kB file held LiftLab for 19 s). PyTorch stores its
// archives' entries uncompressed; a repacked archive may deflate them, which real tensors and
// code survive at a few times their size. So the declared total may be at most 8 × the file
// plus 16 MiB.
void check_declared_sizes(const std::vector<ZipEntry>& entries, const std::string& bytes,
                          const std::string& path, const std::string& key) {
    const uint64_t bound = 8 * static_cast<uint64_t>(bytes.size()) + (uint64_t{16} << 20);
    uint64_t total = 0;
    for (const auto& e : entries) {
        total += std::min<uint64_t>(e.size, bound + 1);
        if (total > bound)
            throw SpecError(key, path + ": not a TorchScript archive: its entry '" + e.name +
                                     "' declares " + std::to_string(e.size) +
                                     " bytes, more than the " + std::to_string(bytes.size()) +
                                     "-byte file can hold (a damaged or hostile file)");
    }
}

// An entry's bytes: stored as they are, or inflated (raw deflate); nullopt when the entry cannot
// be located (LibTorch's reader then says what is wrong). Throws `damaged` when a deflated entry
// does not inflate to its declared size: LibTorch's miniz would read such a stream differently
// (found by fuzzing: a damaged stream gave it a pickle no check had seen). Sizes are bounded by
// check_declared_sizes.
std::optional<std::string> zip_entry_bytes(const std::string& b, const ZipEntry& e,
                                           const std::function<void()>& damaged) {
    const uint64_t h = e.local_header;
    if (h > b.size() || b.size() - h < 30 || zip_le(b, h, 4) != 0x04034b50) return std::nullopt;
    const uint64_t data = h + 30 + zip_le(b, h + 26, 2) + zip_le(b, h + 28, 2);
    if (data > b.size() || b.size() - data < e.stored) return std::nullopt;
    if (e.method == 0) return b.substr(data, e.stored);
    if (e.method != 8) return std::nullopt;
    std::string out(e.size, '\0');
    z_stream z{};
    if (inflateInit2(&z, -15) != Z_OK) throw std::bad_alloc();
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(b.data() + data));
    z.avail_in = static_cast<uInt>(std::min<uint64_t>(e.stored, UINT32_MAX));
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(std::min<uint64_t>(out.size(), UINT32_MAX));
    const int rc = inflate(&z, Z_FINISH);
    const uint64_t produced = z.total_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END || produced != e.size) damaged();
    return out;
}

// One value on a pickle's stack, as far as the walk below follows it: enough to check a tensor's
// storage (BINPERSID's argument ('storage', torch.<T>Storage, key, device, element count)) and
// how deep containers nest.
struct PickleValue {
    char kind = '?';            // '?' anything else, 'i' an int, 's' a string, 'g' a storage type,
                                // 'p' a storage id, 'S' the string "storage"
    int64_t number = 0;         // 'i' its value, 'g' the item size, 'p' the element count
    size_t at = 0, length = 0;  // 's', 'p' (its key): where the string lies in the pickle
    int64_t item_size = 0;      // 'p'
    uint32_t nest = 1;          // containers in containers, this value included
};

// LibTorch destroys nested values recursively: a pickle of a million nested tuples (1 MB)
// overflowed its stack. PyTorch's own files nest a few levels per submodule.
constexpr uint32_t kMaxPickleNesting = 1000;

// The item size of torch.<name> (a storage type LibTorch 1.13 reads), or 0.
int64_t storage_item_size(const std::string& name) {
    static const std::map<std::string, int64_t> sizes = {
        {"ByteStorage", 1},         {"CharStorage", 1},           {"ShortStorage", 2},
        {"IntStorage", 4},          {"LongStorage", 8},           {"HalfStorage", 2},
        {"FloatStorage", 4},        {"DoubleStorage", 8},         {"ComplexHalfStorage", 4},
        {"ComplexFloatStorage", 8}, {"ComplexDoubleStorage", 16}, {"BoolStorage", 1},
        {"QInt8Storage", 1},        {"QUInt8Storage", 1},         {"QInt32Storage", 4},
        {"BFloat16Storage", 2},     {"QUInt4x2Storage", 1},       {"QUInt2x4Storage", 1}};
    const auto it = sizes.find(name);
    return it == sizes.end() ? 0 : it->second;
}

// The size of a record (the bytes LibTorch allocates for it), by its name in the archive.
using RecordSize = std::function<std::optional<uint64_t>(const std::string& name)>;

// LibTorch's unpickler trusts what a pickle declares. Lengths and memo indices: a string said to
// be 400 MB long is allocated (and zeroed) before the reader finds the file ends, a memo index
// of 2³² reserves 64 GB (found by fuzzing: 13 kB files held LiftLab for seconds, or ran it out
// of memory). Its stack: LibTorch 1.13 reads the top of an empty stack for TUPLE1, BINPERSID and
// others, and past the stack's end for a mark above the top or a dict with an odd number of
// keys and values (found by fuzzing: a crash). A tensor's storage: its element count is taken
// as declared over a record that may be shorter (training then read past the record: found
// while fixing the crash). Deep nesting overflows its stack when the values are destroyed. So
// the opcodes are walked first, with the stack, the marks and the memo, by Python's rules for
// each opcode (which every pickle Python or PyTorch writes keeps); `records` is where a
// storage's key is found (the pickle's name without ".pkl", then "/"). The first unknown opcode
// ends the walk and leaves the file to LibTorch, which refuses opcodes it does not know.
// Returns the problem, or "" when none is seen.
std::string pickle_problem(const std::string& p, const std::string& records,
                           const RecordSize& record_size) {
    const size_t n = p.size();
    size_t i = 0;
    std::vector<PickleValue> stack;
    std::vector<size_t> marks;  // the stack's size at each open MARK
    std::unordered_map<uint64_t, PickleValue> memo;
    auto skip_line = [&] {
        const size_t end = p.find('\n', i);
        i = end == std::string::npos ? n : end + 1;
    };
    while (i < n) {
        const size_t at = i;
        const auto op = static_cast<unsigned char>(p[i++]);
        auto where = [&] {
            static const char* hex = "0123456789abcdef";
            return std::string(" (opcode 0x") + hex[op >> 4] + hex[op & 15] + " at byte " +
                   std::to_string(at) + ")";
        };
        // Its argument: a fixed number of bytes, a length-prefixed string or text lines.
        int fixed = -1, prefix = 0, lines = 0;
        switch (op) {
            case 0x80:
            case 'K':
            case 'h':
            case 'q':
            case 0x82:
                fixed = 1;
                break;
            case 'M':
            case 0x83:
                fixed = 2;
                break;
            case 'J':
            case 'j':
            case 'r':
            case 0x84:
                fixed = 4;
                break;
            case 'G':
            case 0x95:
                fixed = 8;
                break;
            case 'F':
            case 'I':
            case 'L':
            case 'S':
            case 'V':
            case 'P':
            case 'g':
            case 'p':
                lines = 1;
                break;
            case 'c':
            case 'i':
                lines = 2;
                break;
            case 'C':
            case 'U':
            case 0x8a:
            case 0x8c:
                prefix = 1;
                break;
            case 'B':
            case 'T':
            case 'X':
            case 0x8b:
                prefix = 4;
                break;
            case 0x8d:
            case 0x8e:
            case 0x96:
                prefix = 8;
                break;
            case '.':
            case '(':
            case 'N':
            case 0x88:
            case 0x89:
            case ')':
            case ']':
            case '}':
            case 0x8f:
            case 0x97:
            case '0':
            case '1':
            case '2':
            case 'Q':
            case 0x98:
            case 'R':
            case 'b':
            case 'a':
            case 0x81:
            case 0x93:
            case 's':
            case 0x92:
            case 0x85:
            case 0x86:
            case 0x87:
            case 't':
            case 'l':
            case 0x91:
            case 'o':
            case 'd':
            case 'e':
            case 0x90:
            case 'u':
            case 0x94:
                fixed = 0;
                break;
            default:
                return {};
        }
        size_t arg = i, arg_length = 0;
        if (lines) {
            for (int l = 0; l < lines; ++l) skip_line();
            arg_length = i - arg;
        } else if (fixed >= 0) {
            if (n - i < static_cast<size_t>(fixed)) return "it ends inside an opcode" + where();
            arg_length = static_cast<size_t>(fixed);
            i += arg_length;
        } else {
            if (n - i < static_cast<size_t>(prefix)) return "it ends inside an opcode" + where();
            const uint64_t length = zip_le(p, i, prefix);
            i += prefix;
            if (length > n - i)
                return "a " + std::to_string(length) + "-byte string where " +
                       std::to_string(n - i) + " bytes remain";
            arg = i, arg_length = length;
            i += length;
        }

        // Its effect on the stack. Values are taken only from above the open mark, as in Python.
        const size_t floor = marks.empty() ? 0 : marks.back();
        std::string problem;
        auto take = [&](size_t k) {
            if (stack.size() - floor >= k) return true;
            problem = "it takes " + std::to_string(k) + " value" + (k == 1 ? "" : "s") +
                      " where its stack holds " + std::to_string(stack.size() - floor) + where();
            return false;
        };
        auto deepest = [&](size_t from) {  // the deepest nesting among stack[from…]
            uint32_t d = 0;
            for (size_t k = from; k < stack.size(); ++k) d = std::max(d, stack[k].nest);
            return d;
        };
        auto push = [&](PickleValue v) {
            if (v.nest > kMaxPickleNesting) {
                problem = "it nests values more than " + std::to_string(kMaxPickleNesting) +
                          " deep" + where();
                return false;
            }
            stack.push_back(v);
            return true;
        };
        // k values become one that holds them
        auto combine = [&](size_t k) {
            if (!take(k)) return false;
            PickleValue v;
            v.nest = deepest(stack.size() - k) + 1;
            stack.resize(stack.size() - k);
            return push(v);
        };
        // the container on top now holds values nested `items` deep
        auto refill = [&](uint32_t items) {
            PickleValue v;
            v.nest = std::max(stack.back().nest, items + 1);
            stack.pop_back();
            return push(v);
        };
        auto close_mark = [&](bool into, bool pairs) {  // → the values above the mark
            if (marks.empty()) {
                problem = "it closes a mark it never opened" + where();
                return false;
            }
            marks.pop_back();
            const size_t above = stack.size() - floor;
            if (into && floor <= (marks.empty() ? 0 : marks.back())) {
                problem = "it adds to a container below its mark, and there is none" + where();
                return false;
            }
            if (pairs && above % 2 != 0) {
                problem = "a dict with an odd number of keys and values" + where();
                return false;
            }
            return true;
        };
        bool ok = true;
        switch (op) {
            case '.':  // STOP: the result
                if (stack.empty()) return "it stops with nothing on its stack" + where();
                return {};
            case 0x80:
            case 0x95:  // PROTO, FRAME
                break;
            case '(':  // MARK
                marks.push_back(stack.size());
                break;
            case 'K':
            case 'M':
            case 'J': {  // BININT1, BININT2, BININT
                PickleValue v;
                v.kind = 'i';
                v.number = static_cast<int64_t>(zip_le(p, arg, static_cast<int>(arg_length)));
                if (op == 'J') v.number = static_cast<int32_t>(v.number);
                ok = push(v);
                break;
            }
            case 0x8a: {  // LONG1: an int64 as LibTorch reads it
                PickleValue v;
                if (arg_length == 8) {
                    v.kind = 'i';
                    v.number = static_cast<int64_t>(zip_le(p, arg, 8));
                }
                ok = push(v);
                break;
            }
            case 'X':
            case 0x8c:
            case 0x8d: {  // the unicode strings
                PickleValue v;
                v.kind = p.compare(arg, arg_length, "storage") == 0 ? 'S' : 's';
                v.at = arg, v.length = arg_length;
                ok = push(v);
                break;
            }
            case 'c': {  // GLOBAL "module\nname\n": torch.<T>Storage is a storage type
                PickleValue v;
                const std::string text = p.substr(arg, arg_length);
                const size_t nl = text.find('\n');
                if (nl != std::string::npos && text.compare(0, nl, "torch") == 0) {
                    std::string name = text.substr(nl + 1);
                    if (!name.empty() && name.back() == '\n') name.pop_back();
                    if (const int64_t size = storage_item_size(name); size > 0) {
                        v.kind = 'g';
                        v.number = size;
                    }
                }
                ok = push(v);
                break;
            }
            case 'h':
            case 'j': {  // BINGET, LONG_BINGET
                const uint64_t slot = zip_le(p, arg, static_cast<int>(arg_length));
                const auto it = memo.find(slot);
                if (it == memo.end())
                    return "it reads memo slot " + std::to_string(slot) + " before writing it" +
                           where();
                ok = push(it->second);
                break;
            }
            case 'q':
            case 'r':
            case 0x94: {  // BINPUT, LONG_BINPUT, MEMOIZE
                const uint64_t slot =
                    op == 0x94 ? memo.size() : zip_le(p, arg, static_cast<int>(arg_length));
                if (slot > n)  // at most one slot per opcode of the pickle
                    return "a memo index of " + std::to_string(slot) + " in a pickle of " +
                           std::to_string(n) + " bytes";
                if ((ok = take(1))) memo[slot] = stack.back();
                break;
            }
            case 'p':  // PUT (a decimal slot, which LibTorch refuses)
                ok = take(1);
                break;
            case '0':  // POP
                if ((ok = take(1))) stack.pop_back();
                break;
            case '1':  // POP_MARK
                if ((ok = close_mark(false, false))) stack.resize(floor);
                break;
            case '2':  // DUP
                if ((ok = take(1))) ok = push(stack.back());
                break;
            case 'Q': {  // BINPERSID: a tensor's storage from its record
                if (!(ok = take(1))) break;
                const PickleValue id = stack.back();
                if (id.kind != 'p')
                    return "a tensor storage not named as PyTorch names them" + where();
                const std::string key = p.substr(id.at, id.length);
                const auto size = record_size(records + key);
                if (id.number < 0 ||
                    (size && static_cast<uint64_t>(id.number) > *size / id.item_size))
                    return "a tensor storage of " + std::to_string(id.number) + " elements of " +
                           std::to_string(id.item_size) + " bytes where its record '" + key +
                           "' holds " + (size ? std::to_string(*size) : std::string("?")) +
                           " bytes" + where();
                stack.back() = PickleValue{};
                break;
            }
            case 0x98:  // READONLY_BUFFER
                ok = take(1);
                break;
            case 'R':
            case 'b':
            case 0x81:
            case 0x93:  // REDUCE, BUILD, NEWOBJ, STACK_GLOBAL
                ok = combine(2);
                break;
            case 0x92:  // NEWOBJ_EX
                ok = combine(3);
                break;
            case 0x85:
            case 0x86:
            case 0x87:  // TUPLE1, TUPLE2, TUPLE3
                ok = combine(op - 0x84);
                break;
            case 'a':  // APPEND: into the container below
                if ((ok = take(2))) {
                    const uint32_t item = stack.back().nest;
                    stack.pop_back();
                    ok = refill(item);
                }
                break;
            case 's':  // SETITEM
                if ((ok = take(3))) {
                    const uint32_t item = deepest(stack.size() - 2);
                    stack.resize(stack.size() - 2);
                    ok = refill(item);
                }
                break;
            case 't': {  // TUPLE: ('storage', torch.<T>Storage, key, device, count) is a storage id
                if (!(ok = close_mark(false, false))) break;
                PickleValue v;
                v.nest = deepest(floor) + 1;
                if (stack.size() - floor == 5 && stack[floor].kind == 'S' &&
                    stack[floor + 1].kind == 'g' &&
                    (stack[floor + 2].kind == 's' || stack[floor + 2].kind == 'S') &&
                    stack[floor + 4].kind == 'i') {
                    v.kind = 'p';
                    v.at = stack[floor + 2].at, v.length = stack[floor + 2].length;
                    v.item_size = stack[floor + 1].number;
                    v.number = stack[floor + 4].number;
                }
                stack.resize(floor);
                ok = push(v);
                break;
            }
            case 'l':
            case 0x91:
            case 'o':
            case 'd':
            case 'i': {  // LIST FROZENSET OBJ DICT INST
                if (!(ok = close_mark(false, op == 'd'))) break;
                if (op == 'o' && stack.size() == floor) return "an object with no class" + where();
                PickleValue v;
                v.nest = deepest(floor) + 1;
                stack.resize(floor);
                ok = push(v);
                break;
            }
            case 'e':
            case 0x90:
            case 'u': {  // APPENDS, ADDITEMS, SETITEMS
                if (!(ok = close_mark(true, op == 'u'))) break;
                const uint32_t items = deepest(floor);
                stack.resize(floor);
                ok = refill(items);
                break;
            }
            default:  // the constants, the other strings, the empty containers, EXT, GET, PERSID
                ok = push(PickleValue{});
                break;
        }
        if (!ok) return problem;
    }
    return {};
}

// LibTorch 1.13 compiles an unannotated assignment in a class body as a class constant and then
// reads its missing `Final[…]` annotation (a null read, found by fuzzing: a damaged code file
// crashed LiftLab; later PyTorch checks it). PyTorch writes class constants as
// `name : Final[T] = value`, enum members and its metadata lists (`__parameters__ = […]`) as
// plain assignments; anything else is refused. Returns the problem, or "".
std::string code_problem(const std::string& code) {
    static const std::vector<std::string> metadata = {"__parameters__", "__buffers__",
                                                      "__annotations__", "__forward_pre_hooks__",
                                                      "__forward_hooks__"};
    std::istringstream in(code);
    std::string line;
    int number = 0;
    bool checked = false;     // inside a class whose body is checked
    std::string body_indent;  // its body's indentation, once seen
    while (std::getline(in, line)) {
        ++number;
        const size_t indent = line.find_first_not_of(" \t");
        if (indent == std::string::npos || line[indent] == '#' || line[indent] == '\r') continue;
        if (indent == 0) {
            // `class Name(Base):` — an Enum's members are plain assignments
            checked = line.rfind("class ", 0) == 0 && line.find("(Enum)") == std::string::npos;
            body_indent.clear();
            continue;
        }
        if (!checked) continue;
        if (body_indent.empty()) body_indent = line.substr(0, indent);
        if (line.compare(0, indent, body_indent) != 0 || indent != body_indent.size()) continue;
        size_t k = indent;
        while (k < line.size() &&
               (std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '_'))
            ++k;
        if (k == indent) continue;
        const std::string name = line.substr(indent, k - indent);
        while (k < line.size() && (line[k] == ' ' || line[k] == '\t')) ++k;
        const bool assigned =
            k < line.size() && line[k] == '=' && (k + 1 == line.size() || line[k + 1] != '=');
        if (assigned && std::find(metadata.begin(), metadata.end(), name) == metadata.end())
            return "line " + std::to_string(number) + ": a class constant '" + name +
                   "' without its Final[…] annotation";
    }
    return {};
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Every deflated entry must inflate to its declared size, every pickle of the archive (data.pkl,
// constants.pkl, the code's debug pickles) pass pickle_problem and every code file code_problem.
void check_entries(const std::vector<ZipEntry>& entries, const std::string& bytes,
                   const std::string& path, const std::string& key) {
    // LibTorch finds a record by its name, case ignored, and allocates the size the directory
    // declares: with two of one name, the smaller counts.
    std::map<std::string, uint64_t> sizes;
    for (const auto& e : entries) {
        const auto [it, fresh] = sizes.emplace(lower(e.name), e.size);
        if (!fresh) it->second = std::min(it->second, e.size);
    }
    const RecordSize record_size = [&](const std::string& name) -> std::optional<uint64_t> {
        const auto it = sizes.find(lower(name));
        if (it == sizes.end()) return std::nullopt;
        return it->second;
    };
    for (const auto& e : entries) {
        // LibTorch finds its entries with the case ignored: so are the kinds here.
        const std::string name = lower(e.name);
        const bool pickle = ends_with(name, "pkl");
        const bool code = ends_with(name, ".py");
        if (!pickle && !code && e.method != 8) continue;
        const auto content = zip_entry_bytes(bytes, e, [&] {
            throw SpecError(key, path + ": not a TorchScript archive: its entry '" + e.name +
                                     "' does not inflate to its declared " +
                                     std::to_string(e.size) + " bytes (a damaged file)");
        });
        if (!content) continue;
        if (pickle) {
            const std::string records =
                (ends_with(name, ".pkl") ? e.name.substr(0, e.name.size() - 4) : e.name) + "/";
            const std::string problem = pickle_problem(*content, records, record_size);
            if (!problem.empty())
                throw SpecError(key, path + ": not a TorchScript archive: its pickle '" + e.name +
                                         "' is damaged (" + problem + ")");
        } else if (code) {
            const std::string problem = code_problem(*content);
            if (!problem.empty())
                throw SpecError(key, path + ": not a TorchScript archive: its code '" + e.name +
                                         "' is damaged (" + problem + ")");
        }
    }
}

// A tensor that reaches past its storage, or one LiftLab does not read (LibTorch sets the
// sizes, strides and offset a pickle declares without checking them against the storage: a
// damaged file would have training read past it). Returns the problem, or "".
std::string tensor_problem(const std::string& name, const at::Tensor& t) {
    if (!t.defined()) return {};
    if (t.layout() != at::kStrided)
        return "'" + name + "' is a sparse tensor (LiftLab reads dense ones)";
    if (!t.has_storage() || t.numel() == 0) return {};
    __int128 last = t.storage_offset();  // the last element the view reaches
    bool negative = t.storage_offset() < 0;
    for (int64_t d = 0; d < t.dim(); ++d) {
        negative = negative || t.stride(d) < 0;
        last += static_cast<__int128>(t.size(d) - 1) * t.stride(d);
    }
    const __int128 bytes = (last + 1) * static_cast<__int128>(t.element_size());
    if (negative || bytes > static_cast<__int128>(t.storage().nbytes())) {
        std::ostringstream s;
        s << "tensor '" << name << "' of sizes " << t.sizes() << ", strides " << t.strides()
          << " and offset " << t.storage_offset() << " reaches past its storage of "
          << t.storage().nbytes() << " bytes";
        return s.str();
    }
    return {};
}

// Every tensor the module holds: its attributes (parameters, buffers and others, and the tensors
// in its lists, tuples and dicts) and the constants of its methods' code.
std::string module_tensor_problem(const torch::jit::Module& module) {
    std::string problem;
    auto visit = [&](const std::string& name, const c10::IValue& v) {
        if (v.isTensor()) {
            problem = tensor_problem(name, v.toTensor());
        } else if (v.isList()) {
            for (const auto& e : v.toListRef())
                if (problem.empty() && e.isTensor()) problem = tensor_problem(name, e.toTensor());
        } else if (v.isTuple()) {
            for (const auto& e : v.toTupleRef().elements())
                if (problem.empty() && e.isTensor()) problem = tensor_problem(name, e.toTensor());
        } else if (v.isGenericDict()) {
            for (const auto& e : v.toGenericDict())
                if (problem.empty() && e.value().isTensor())
                    problem = tensor_problem(name, e.value().toTensor());
        }
    };
    for (const auto& a : module.named_attributes(/*recurse=*/true)) {
        visit(a.name, a.value);
        if (!problem.empty()) return problem;
    }
    std::function<void(torch::jit::Block*)> constants = [&](torch::jit::Block* block) {
        for (auto* node : block->nodes()) {
            if (!problem.empty()) return;
            if (node->kind() == c10::prim::Constant && node->outputs().size() == 1)
                if (const auto value = torch::jit::toIValue(node->output()))
                    visit("a constant of the code", *value);
            for (auto* inner : node->blocks()) constants(inner);
        }
    };
    for (const auto& sub : module.modules())
        for (const auto& method : sub.get_methods()) {
            constants(method.graph()->block());
            if (!problem.empty()) return problem;
        }
    return problem;
}

// The archive's debug pickles (`code/….py.debug_pkl`: where each line of the archive's code came
// from in the user's Python file) renamed so that LibTorch does not find them. LibTorch 1.13
// indexes their string table without checking the index (found by fuzzing: a damaged one crashed
// LiftLab as it formatted an error); without them its messages name the archive's own code lines.
void hide_debug_pickles(std::string& b, const std::vector<ZipEntry>& entries) {
    const std::string suffix = ".debug_pkl";
    for (const auto& e : entries) {
        if (!ends_with(lower(e.name), suffix)) continue;
        const size_t name_len = e.name.size();
        b.replace(e.central + 46 + name_len - 3, 3, "off");
        const uint64_t h = e.local_header;
        if (h <= b.size() && b.size() - h >= 30 && zip_le(b, h + 26, 2) == name_len &&
            b.size() - h - 30 >= name_len && lower(b.substr(h + 30, name_len)) == lower(e.name))
            b.replace(h + 30 + name_len - 3, 3, "off");
    }
}

// LibTorch's message in one line (core/error_text.h: no backtrace, TorchScript's error line).
std::string first_line(const std::exception& e) {
    const std::string text = error_text(e);
    return text.substr(0, text.find('\n'));
}

// The module owning the parameter `dotted_name` and the parameter's own name.
std::pair<torch::jit::Module, std::string> owner_of(const torch::jit::Module& module,
                                                    const std::string& dotted_name) {
    torch::jit::Module owner = module;
    std::string rest = dotted_name;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
        owner = owner.attr(rest.substr(0, dot)).toModule();
        rest = rest.substr(dot + 1);
    }
    return {owner, rest};
}

}  // namespace

namespace {

// The reader's own checks, before any LibTorch code sees the bytes: a regular file of at most
// kMaxTorchScriptBytes (its SHA-256 the expected one, when given) holding a zip archive whose
// directory, sizes and entries are consistent. Returns the bytes and their zip entries.
std::string read_checked_archive(const std::string& path, const std::string& key,
                                 const std::string& expected_sha256, std::string& sha256,
                                 std::vector<ZipEntry>& entries) {
    std::string bytes;
    try {
        bytes = read_regular_file(path, kMaxTorchScriptBytes);
    } catch (const DataError& e) {
        throw SpecError(key, e.what());
    }
    sha256 = hex_sha256(bytes);
    if (!expected_sha256.empty() && expected_sha256 != sha256)
        throw SpecError(key + "_sha256", path + " has SHA-256 " + sha256 + ", the spec records " +
                                             expected_sha256 + " (the file changed; remove " + key +
                                             "_sha256 to use it as it is)");
    bool damaged = false;
    entries = zip_entries(bytes, damaged);
    if (damaged)
        throw SpecError(key, path +
                                 ": not a TorchScript archive: its zip directory is damaged (its "
                                 "entry count, offsets or signatures do not match)");
    check_declared_sizes(entries, bytes, path, key);
    check_entries(entries, bytes, path, key);
    return bytes;
}

}  // namespace

void check_torchscript_archive(const std::string& path, const std::string& key,
                               const std::string& expected_sha256) {
    std::string sha256;
    std::vector<ZipEntry> entries;
    read_checked_archive(path, key, expected_sha256, sha256, entries);
}

LoadedTorchScript load_torchscript(const std::string& path, const std::string& key,
                                   const std::string& expected_sha256) {
    const Activity loading(std::string(kTorchScriptLoadActivity) + " " + path);
    LoadedTorchScript out;
    std::vector<ZipEntry> entries;
    std::string bytes = read_checked_archive(path, key, expected_sha256, out.sha256, entries);
    hide_debug_pickles(bytes, entries);
    std::istringstream stream(bytes);
    try {
        out.module = torch::jit::load(stream, torch::kCPU);
    } catch (const torch::jit::ErrorReport&) {
        // The archive's code does not compile. Its what() would print the damaged source around
        // the error, which for a damaged file can take seconds to minutes (found by fuzzing).
        throw SpecError(key,
                        path +
                            ": not a TorchScript archive: its code does not compile (a damaged "
                            "file, or one from an incompatible PyTorch); save the model with "
                            "torch.jit.script(model).save(path)");
    } catch (const std::exception& e) {
        // A torch.save() file is a zip archive too, without TorchScript's constants.
        const std::string what = first_line(e);
        const bool pickled = what.find("constants.pkl") != std::string::npos;
        throw SpecError(key,
                        path + ": not a TorchScript archive" +
                            (pickled ? " (it looks like a torch.save() file: a pickled module "
                                       "or state_dict)"
                                     : "") +
                            "; save the model with torch.jit.script(model).save(path): " + what);
    }
    if (const std::string problem = module_tensor_problem(out.module); !problem.empty())
        throw SpecError(key,
                        path + ": not a TorchScript archive: its " + problem + " (a damaged file)");
    if (!out.module.find_method("forward"))
        throw SpecError(key, path + ": the TorchScript module has no forward method");
    if (torchscript_parameters(out.module).empty())
        throw SpecError(key,
                        path + ": the TorchScript module has no parameters (nothing to train)");
    try {
        out.module.to(torch::kFloat32);
    } catch (const std::exception& e) {
        throw SpecError(key, path + ": cannot convert the parameters to float32: " + first_line(e));
    }
    return out;
}

torch::Tensor torchscript_forward(torch::jit::Module& module, const torch::Tensor& x,
                                  const std::string& dict_key, std::string* selector) {
    if (selector) selector->clear();
    // Op by op: no fused kernels, no autodiff subgraphs, the autograd of the same eager ops.
    torch::jit::GraphOptimizerEnabledGuard plain(false);
    const Activity running(kTorchScriptForwardActivity);
    c10::IValue out;
    try {
        out = module.forward({x});
    } catch (const std::exception& e) {
        const std::string advice = error_advice(e);
        throw std::runtime_error("forward failed: " + first_line(e) +
                                 (advice.empty() ? "" : " (" + advice + ")"));
    }
    if (out.isTensor()) return out.toTensor();
    if (out.isTuple() || out.isList()) {
        const auto elements =
            out.isTuple() ? out.toTupleRef().elements().vec() : out.toListRef().vec();
        const std::string what = out.isTuple() ? "a tuple" : "a list";
        if (elements.empty())
            throw std::runtime_error("forward returned an empty " + what.substr(2) +
                                     "; it must return a tensor");
        if (!elements.front().isTensor())
            throw std::runtime_error("forward returned " + what + " whose first element is " +
                                     elements.front().tagKind() +
                                     "; of a tuple or list LiftLab takes the first element, "
                                     "which must be a tensor");
        if (selector) *selector = "[0]";
        return elements.front().toTensor();
    }
    if (out.isGenericDict()) {
        std::string keys;
        for (const auto& entry : out.toGenericDict()) {
            const auto& k = entry.key();
            const std::string name = k.isString() ? k.toStringRef() : "<" + k.tagKind() + ">";
            if (k.isString() && name == dict_key) {
                if (!entry.value().isTensor())
                    throw std::runtime_error("forward returned a dict whose '" + dict_key +
                                             "' entry is " + entry.value().tagKind() +
                                             ", not a tensor");
                if (selector) *selector = "[\"" + dict_key + "\"]";
                return entry.value().toTensor();
            }
            if (keys.size() < 200) keys += (keys.empty() ? "" : ", ") + name;
        }
        throw std::runtime_error("forward returned a dict without the entry '" + dict_key +
                                 "' (its keys: " + keys + "); of a dict LiftLab takes the '" +
                                 dict_key + "' entry: put the tensor there, or return it alone");
    }
    throw std::runtime_error("forward returned " + out.tagKind() + ", not a tensor");
}

std::vector<std::pair<std::string, torch::Tensor>> torchscript_parameters(
    const torch::jit::Module& module) {
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (const auto& p : module.named_parameters(/*recurse=*/true))
        out.emplace_back(p.name, p.value);
    return out;
}

void set_torchscript_parameter(torch::jit::Module& module, const std::string& dotted_name,
                               const torch::Tensor& value) {
    auto [owner, name] = owner_of(module, dotted_name);
    owner.setattr(name, value);
}

void reset_torchscript_parameters(torch::jit::Module& module) {
    torch::NoGradGuard no_grad;
    const auto params = torchscript_parameters(module);
    std::map<std::string, int64_t> fan_in;  // of every "<x>.weight"
    auto fan_in_of = [](const torch::Tensor& w) {
        int64_t receptive = 1;
        for (int64_t i = 2; i < w.dim(); ++i) receptive *= w.size(i);
        return w.size(1) * receptive;
    };
    for (const auto& [name, t] : params)
        if (t.dim() >= 2) fan_in[name] = fan_in_of(t);
    const std::string suffix = ".bias";
    for (const auto& [name, t] : params) {
        if (t.dim() >= 2) {
            const int64_t n = fan_in.at(name);
            if (n > 0)
                t.uniform_(-1.0 / std::sqrt(static_cast<double>(n)),
                           1.0 / std::sqrt(static_cast<double>(n)));
            else
                t.zero_();
            continue;
        }
        const bool is_bias = name.size() >= suffix.size() &&
                             name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
        const std::string weight =
            is_bias ? name.substr(0, name.size() - suffix.size()) + ".weight" : "";
        const bool top_level_bias = name == "bias";
        const auto it = fan_in.find(top_level_bias ? "weight" : weight);
        if ((is_bias || top_level_bias) && it != fan_in.end() && it->second > 0) {
            const double bound = 1.0 / std::sqrt(static_cast<double>(it->second));
            t.uniform_(-bound, bound);
        } else {
            t.zero_();
        }
    }
}

std::vector<TorchScriptParameterInfo> inspect_torchscript(const std::string& path,
                                                          const std::string& key) {
    std::vector<TorchScriptParameterInfo> out;
    for (const auto& [name, t] : torchscript_parameters(load_torchscript(path, key).module))
        out.push_back({name, t.sizes().vec()});
    return out;
}

}  // namespace liftlab
