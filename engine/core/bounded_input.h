// Bounded readers for everything LiftLab reads from disk or the command line: files must be
// regular and not absurdly large (a FIFO or /dev/zero must not block or exhaust memory), and JSON
// must not nest deeper than any file we write (deep nesting overflows the stack of every
// recursive JSON consumer: dump, copy, comparison). Errors are DataErrors naming file and line.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace liftlab {

// Deeper than any spec, summary or landscape cache LiftLab writes (they nest 4 levels at most).
constexpr int kMaxJsonDepth = 64;
// Specs, summaries and landscape caches are kilobytes to a few megabytes.
constexpr std::uint64_t kMaxJsonFileBytes = std::uint64_t{64} << 20;

// The most one read(2) or write(2) of a file moves. The kernel copies a call's bytes into or out
// of the page cache without giving up its core (the machines LiftLab meets include kernels with
// no kernel preemption), and on a virtual machine whose freed memory goes back to the host that
// copy ran at ≈ 100 MB/s: one 4 MB state write held a core for 40–80 ms, and the window's
// thread, woken behind it, waited as long (bench: event_loop_fork_landscape). Each call's return
// to user space is a point where the scheduler can switch, so a file moves in pieces this size.
constexpr std::size_t kIoChunkBytes = std::size_t{256} << 10;

// The whole content of `path`. Throws DataError when it is missing, not a regular file (FIFO,
// device, folder), larger than `max_bytes`, or cannot be read.
std::string read_regular_file(const std::string& path, std::uint64_t max_bytes);

// Parses JSON text; `where` names the source in messages (a file path, or "--set key").
// Throws DataError(where, line, …) for invalid JSON, a number out of double range, or nesting
// deeper than `max_depth`.
nlohmann::json parse_json_bounded(const std::string& text, const std::string& where,
                                  int max_depth = kMaxJsonDepth);

// Throws DataError(where, line, …) when brackets outside strings nest deeper than `max_depth`.
void check_json_depth(const std::string& text, const std::string& where,
                      int max_depth = kMaxJsonDepth);

// read_regular_file + parse_json_bounded.
nlohmann::json read_json_file(const std::string& path, std::uint64_t max_bytes = kMaxJsonFileBytes);

// The 1-based line of byte `offset` in `text`.
int line_of_offset(const std::string& text, std::size_t offset);

}  // namespace liftlab
