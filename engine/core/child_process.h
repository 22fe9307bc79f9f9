// A helper process for work that may crash, hang or exhaust memory (a user's TorchScript model:
// training/model_probe.h), so that none of it can take the calling process down.
//
// POSIX only, no Qt: the engine's runner starts it from whichever thread runs the experiment (the
// CLI's main thread, the window's worker). posix_spawn, not fork: forking a process that already
// runs LibTorch's, OpenMP's or Qt's threads copies their locks in whatever state they are; the
// child is a fresh exec of an executable. Its stdin is /dev/null, its stdout and stderr are read
// (the tail is kept for the message of a crash), and it writes its answer on file descriptor 3,
// which no model code writes to (a TorchScript print() goes to stdout). It runs in its own process
// group, so a terminal's Ctrl-C reaches the parent alone, which then ends the child itself.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace liftlab {

struct ChildOptions {
    std::vector<std::string> argv;  // argv[0]: the executable's path
    double timeout_seconds = 60;    // then SIGKILL
    // Polled every 20 ms: true ends the child at once (SIGKILL).
    const std::atomic<bool>* stop = nullptr;
    size_t max_answer_bytes = size_t{4} << 20;  // kept of what it writes on fd 3
    size_t max_log_bytes = size_t{16} << 10;    // kept of stdout + stderr (the last bytes)
};

struct ChildOutcome {
    enum class End { Exited, Signalled, TimedOut, Stopped };
    End end = End::Exited;
    int exit_code = -1;  // End::Exited
    int signal = 0;      // End::Signalled
    std::string answer;  // written on fd 3
    std::string log;     // the tail of stdout + stderr
    double seconds = 0;  // wall time, start to reaped
};

// Runs the child to its end. Throws std::runtime_error when it cannot be started.
ChildOutcome run_child_process(const ChildOptions& options);

// This process's executable (/proc/self/exe), to start it again as a helper.
std::string current_executable();

// "SIGSEGV", "SIGABRT", … ("signal N" for others).
std::string signal_name(int signal);

// The machine's physical memory in bytes (0 when unknown).
std::uint64_t physical_memory_bytes();

// In the child, before anything else: at most `address_space_bytes` of virtual memory
// (RLIMIT_AS; 0: no limit; not applied in an AddressSanitizer build, whose shadow memory alone
// exceeds any such limit), SIGKILL when the parent (process id `parent`, 0: not checked) dies,
// SIGALRM after `seconds` (a child left behind cannot run on). Returns "" or what could not be set.
std::string limit_this_process(std::uint64_t address_space_bytes, double seconds, long parent);

}  // namespace liftlab
