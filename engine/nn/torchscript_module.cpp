#include "nn/torchscript_module.h"

#include "nn/torchscript_inspect.h"

#include <torch/csrc/jit/frontend/error_report.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "core/bounded_input.h"
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
    if ((count == 0xFFFF || offset == 0xFFFFFFFF) && eocd >= 20 &&
        zip_le(b, eocd - 20, 4) == 0x07064b50) {  // zip64: the locator, then its end record
        const uint64_t end64 = zip_le(b, eocd - 20 + 8, 8);
        if (end64 > b.size() || b.size() - end64 < 56 || zip_le(b, end64, 4) != 0x06064b50)
            return damaged = true, std::vector<ZipEntry>{};
        count = zip_le(b, end64 + 32, 8);
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

// LibTorch's unpickler trusts what a pickle declares. Lengths and memo indices: a string said to
// be 400 MB long is allocated (and zeroed) before the reader finds the file ends, a memo index
// of 2³² reserves 64 GB (found by fuzzing: 13 kB files held LiftLab for seconds, or ran it out
// of memory). Its stack: LibTorch 1.13 reads the top of an empty stack for TUPLE1, BINPERSID and
// others, and past the stack's end for a mark above the top or a dict with an odd number of
// keys and values (found by fuzzing: a crash). So the opcodes are walked first, with the stack
// depth, the marks and the memo slots written, by Python's rules for each opcode (which every
// pickle Python writes keeps); the first unknown opcode ends the walk and leaves the file to
// LibTorch, which refuses opcodes it does not know. Returns the problem, or "" when none is seen.
std::string pickle_problem(const std::string& p) {
    const size_t n = p.size();
    size_t i = 0;
    size_t depth = 0;                                         // values on the stack
    std::vector<size_t> marks;                                // the depth at each open MARK
    std::vector<char> memo(std::max<size_t>(n, 256) + 1, 0);  // slots written (index ≤ n: below)
    size_t written = 0;
    auto skip_line = [&] {
        const size_t end = p.find('\n', i);
        i = end == std::string::npos ? n : end + 1;
    };
    while (i < n) {
        const size_t at = i;
        const auto op = static_cast<unsigned char>(p[i++]);
        auto where = [&] {
            return " (opcode " + std::to_string(op) + " at byte " + std::to_string(at) + ")";
        };
        int fixed = -1;        // bytes of a fixed-size argument
        int prefix = 0;        // bytes of a length prefix before as many bytes of data
        int lines = 0;         // newline-ended arguments
        int pops = 0;          // values taken above the open mark
        int pushes = 1;        // values left
        bool to_mark = false;  // takes every value above the open mark, and the mark
        bool into = false;     // … into the container just below the mark
        bool pairs = false;    // … as keys and values
        switch (op) {
            case '.':  // STOP: the result
                if (depth < 1) return "it stops with nothing on its stack" + where();
                return {};
            case 0x80:  // PROTO
                fixed = 1, pushes = 0;
                break;
            case 0x95:  // FRAME
                fixed = 8, pushes = 0;
                break;
            case '(':  // MARK
                marks.push_back(depth);
                fixed = 0, pushes = 0;
                break;
            case 'N':
            case 0x88:
            case 0x89:
            case ')':
            case ']':
            case '}':
            case 0x8f:
            case 0x97:
                fixed = 0;  // constants and empty containers
                break;
            case '0':  // POP
                fixed = 0, pops = 1, pushes = 0;
                break;
            case '1':  // POP_MARK
                fixed = 0, to_mark = true, pushes = 0;
                break;
            case '2':  // DUP
                fixed = 0, pops = 1, pushes = 2;
                break;
            case 'Q':
            case 0x98:  // BINPERSID, READONLY_BUFFER: one value for another
                fixed = 0, pops = 1;
                break;
            case 'R':
            case 'b':
            case 'a':
            case 0x81:
            case 0x93:                // REDUCE BUILD APPEND NEWOBJ
                fixed = 0, pops = 2;  // STACK_GLOBAL
                break;
            case 's':
            case 0x92:  // SETITEM, NEWOBJ_EX
                fixed = 0, pops = 3;
                break;
            case 0x85:
            case 0x86:
            case 0x87:  // TUPLE1..3
                fixed = 0, pops = op - 0x84;
                break;
            case 't':
            case 'l':
            case 0x91:
            case 'o':  // TUPLE LIST FROZENSET OBJ
                fixed = 0, to_mark = true;
                break;
            case 'i':  // INST
                lines = 2, to_mark = true;
                break;
            case 'd':  // DICT
                fixed = 0, to_mark = pairs = true;
                break;
            case 'e':
            case 0x90:  // APPENDS, ADDITEMS
                fixed = 0, to_mark = into = true, pushes = 0;
                break;
            case 'u':  // SETITEMS
                fixed = 0, to_mark = into = pairs = true, pushes = 0;
                break;
            case 0x94:  // MEMOIZE: the next slot, as Python numbers them
                if (written < memo.size()) memo[written] = 1;
                ++written;
                fixed = 0, pops = 1, pushes = 1;
                break;
            case 'q':
            case 'r': {  // BINPUT, LONG_BINPUT: a memo index, at most one per opcode
                const int bytes = op == 'q' ? 1 : 4;
                if (n - i < static_cast<size_t>(bytes)) return "it ends inside an opcode" + where();
                const uint64_t slot = zip_le(p, i, bytes);
                if (slot > n)
                    return "a memo index of " + std::to_string(slot) + " in a pickle of " +
                           std::to_string(n) + " bytes";
                written += !memo[slot];
                memo[slot] = 1;
                fixed = bytes, pops = 1, pushes = 1;
                break;
            }
            case 'h':
            case 'j': {  // BINGET, LONG_BINGET
                const int bytes = op == 'h' ? 1 : 4;
                if (n - i < static_cast<size_t>(bytes)) return "it ends inside an opcode" + where();
                const uint64_t slot = zip_le(p, i, bytes);
                if (slot >= memo.size() || !memo[slot])
                    return "it reads memo slot " + std::to_string(slot) + " before writing it" +
                           where();
                fixed = bytes;
                break;
            }
            case 'K':
            case 0x82:
                fixed = 1;
                break;
            case 'M':
            case 0x83:
                fixed = 2;
                break;
            case 'J':
            case 0x84:
                fixed = 4;
                break;
            case 'G':
                fixed = 8;
                break;
            case 'F':
            case 'I':
            case 'L':
            case 'S':
            case 'V':
            case 'P':
                lines = 1;
                break;
            case 'g':  // GET: the slot is a decimal line (left to LibTorch, which refuses it)
                lines = 1;
                break;
            case 'p':  // PUT
                lines = 1, pops = 1, pushes = 1;
                break;
            case 'c':  // GLOBAL
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
            default:
                return {};
        }
        // The stack: values are taken only from above the open mark, as in Python.
        const size_t floor = marks.empty() ? 0 : marks.back();
        if (to_mark) {
            if (marks.empty()) return "it closes a mark it never opened" + where();
            const size_t above = depth - floor;
            marks.pop_back();
            if (into && floor <= (marks.empty() ? 0 : marks.back()))
                return "it adds to a container below its mark, and there is none" + where();
            if (pairs && above % 2 != 0)
                return "a dict with an odd number of keys and values" + where();
            if (op == 'o' && above < 1) return "an object with no class" + where();
            depth = floor + static_cast<size_t>(pushes);
        } else {
            if (depth - floor < static_cast<size_t>(pops))
                return "it takes " + std::to_string(pops) + " value" + (pops == 1 ? "" : "s") +
                       " where its stack holds " + std::to_string(depth - floor) + where();
            depth = depth - static_cast<size_t>(pops) + static_cast<size_t>(pushes);
        }
        if (lines) {
            for (int l = 0; l < lines; ++l) skip_line();
            continue;
        }
        if (fixed >= 0) {
            if (n - i < static_cast<size_t>(fixed)) return "it ends inside an opcode" + where();
            i += fixed;
            continue;
        }
        if (n - i < static_cast<size_t>(prefix)) return "it ends inside an opcode" + where();
        const uint64_t length = zip_le(p, i, prefix);
        i += prefix;
        if (length > n - i)
            return "a " + std::to_string(length) + "-byte string where " + std::to_string(n - i) +
                   " bytes remain";
        i += length;
    }
    return {};
}

// Every deflated entry must inflate to its declared size, and every pickle of the archive
// (data.pkl, constants.pkl, the code's debug pickles) pass pickle_problem.
void check_entries(const std::vector<ZipEntry>& entries, const std::string& bytes,
                   const std::string& path, const std::string& key) {
    for (const auto& e : entries) {
        const bool pickle = e.name.size() >= 3 && e.name.compare(e.name.size() - 3, 3, "pkl") == 0;
        if (!pickle && e.method != 8) continue;
        const auto content = zip_entry_bytes(bytes, e, [&] {
            throw SpecError(key, path + ": not a TorchScript archive: its entry '" + e.name +
                                     "' does not inflate to its declared " +
                                     std::to_string(e.size) + " bytes (a damaged file)");
        });
        if (!content || !pickle) continue;
        const std::string problem = pickle_problem(*content);
        if (!problem.empty())
            throw SpecError(key, path + ": not a TorchScript archive: its pickle '" + e.name +
                                     "' is damaged (" + problem + ")");
    }
}

// LibTorch's messages carry a C++ backtrace after the first lines; a user needs the first one.
// An error inside TorchScript code ends with the Python-side error ("RuntimeError: …") after
// the interpreter's traceback: that line, with the first frame of the user's own code.
std::string first_line(const std::string& what) {
    const std::string traceback = "Traceback of TorchScript, original code";
    if (const auto at = what.find(traceback); at != std::string::npos) {
        std::string last;
        std::istringstream lines(what.substr(at));
        std::string line, frame;
        while (std::getline(lines, line)) {
            if (line.find_first_not_of(" \t") == std::string::npos) continue;
            if (frame.empty() && line.rfind("  File \"", 0) == 0) frame = line.substr(2);
            last = line;
        }
        return last + (frame.empty() ? "" : " (" + frame + ")");
    }
    const auto end = what.find('\n');
    std::string line = what.substr(0, end);
    const auto pos = line.find(" (most recent call first)");
    if (pos != std::string::npos) line = line.substr(0, pos);
    return line;
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

LoadedTorchScript load_torchscript(const std::string& path, const std::string& key) {
    std::string bytes;
    try {
        bytes = read_regular_file(path, kMaxTorchScriptBytes);
    } catch (const DataError& e) {
        throw SpecError(key, e.what());
    }
    LoadedTorchScript out;
    out.sha256 = hex_sha256(bytes);
    bool damaged = false;
    const auto entries = zip_entries(bytes, damaged);
    if (damaged)
        throw SpecError(key, path +
                                 ": not a TorchScript archive: its zip directory is damaged (its "
                                 "entry count, offsets or signatures do not match)");
    check_declared_sizes(entries, bytes, path, key);
    check_entries(entries, bytes, path, key);
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
        const std::string what = first_line(e.what());
        const bool pickled = what.find("constants.pkl") != std::string::npos;
        throw SpecError(key,
                        path + ": not a TorchScript archive" +
                            (pickled ? " (it looks like a torch.save() file: a pickled module "
                                       "or state_dict)"
                                     : "") +
                            "; save the model with torch.jit.script(model).save(path): " + what);
    }
    if (!out.module.find_method("forward"))
        throw SpecError(key, path + ": the TorchScript module has no forward method");
    if (torchscript_parameters(out.module).empty())
        throw SpecError(key,
                        path + ": the TorchScript module has no parameters (nothing to train)");
    try {
        out.module.to(torch::kFloat32);
    } catch (const std::exception& e) {
        throw SpecError(
            key, path + ": cannot convert the parameters to float32: " + first_line(e.what()));
    }
    return out;
}

torch::Tensor torchscript_forward(torch::jit::Module& module, const torch::Tensor& x) {
    // Op by op: no fused kernels, no autodiff subgraphs, the autograd of the same eager ops.
    torch::jit::GraphOptimizerEnabledGuard plain(false);
    c10::IValue out;
    try {
        out = module.forward({x});
    } catch (const std::exception& e) {
        throw std::runtime_error("forward failed: " + first_line(e.what()));
    }
    if (!out.isTensor())
        throw std::runtime_error("forward returned " + out.tagKind() + ", not a tensor");
    return out.toTensor();
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
