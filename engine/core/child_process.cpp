#include "core/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace liftlab {

namespace {

// Closes a file descriptor once (−1: closed).
void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

// Reads what is there without blocking; false at end of file (or an error).
bool read_available(int fd, std::string& into, size_t keep, bool keep_tail) {
    char buffer[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) {
            if (keep_tail) {
                into.append(buffer, static_cast<size_t>(n));
                if (into.size() > keep) into.erase(0, into.size() - keep);
            } else if (into.size() < keep) {
                into.append(buffer, std::min(static_cast<size_t>(n), keep - into.size()));
            }
            continue;
        }
        if (n == 0) return false;
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

// Spawn attributes and file actions, released on every path.
struct SpawnSetup {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    SpawnSetup() {
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attributes);
    }
    ~SpawnSetup() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attributes);
    }
};

}  // namespace

ChildOutcome run_child_process(const ChildOptions& o) {
    if (o.argv.empty()) throw std::runtime_error("run_child_process: no executable");
    int answer[2] = {-1, -1}, log[2] = {-1, -1};
    if (::pipe2(answer, O_CLOEXEC) != 0 || ::pipe2(log, O_CLOEXEC) != 0) {
        const std::string why = std::strerror(errno);
        for (int* fd : {&answer[0], &answer[1], &log[0], &log[1]}) close_fd(*fd);
        throw std::runtime_error("cannot start a helper process: pipe: " + why);
    }
    pid_t pid = -1;
    int spawned;
    {
        SpawnSetup s;
        posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&s.actions, log[1], 1);
        posix_spawn_file_actions_adddup2(&s.actions, log[1], 2);
        posix_spawn_file_actions_adddup2(&s.actions, answer[1], 3);
        // Its own process group; default handlers and no blocked signal (a front end ignores
        // SIGXFSZ and catches SIGINT; ignored signals would survive the exec).
        sigset_t none, defaults;
        sigemptyset(&none);
        sigemptyset(&defaults);
        for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGXFSZ, SIGALRM, SIGCHLD})
            sigaddset(&defaults, sig);
        posix_spawnattr_setpgroup(&s.attributes, 0);
        posix_spawnattr_setsigmask(&s.attributes, &none);
        posix_spawnattr_setsigdefault(&s.attributes, &defaults);
        posix_spawnattr_setflags(
            &s.attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        std::vector<char*> argv;
        for (const auto& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        spawned = ::posix_spawn(&pid, argv[0], &s.actions, &s.attributes, argv.data(), environ);
    }
    close_fd(answer[1]);
    close_fd(log[1]);
    if (spawned != 0) {
        close_fd(answer[0]);
        close_fd(log[0]);
        throw std::runtime_error("cannot start a helper process (" + o.argv[0] +
                                 "): " + std::strerror(spawned));
    }
    ::fcntl(answer[0], F_SETFL, ::fcntl(answer[0], F_GETFL) | O_NONBLOCK);
    ::fcntl(log[0], F_SETFL, ::fcntl(log[0], F_GETFL) | O_NONBLOCK);

    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto limit = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(std::max(0.0, o.timeout_seconds)));
    ChildOutcome out;
    bool reaped = false;
    int status = 0;
    Clock::time_point reaped_at;
    auto kill_child = [&](ChildOutcome::End why) {
        ::kill(-pid, SIGKILL);  // the group: anything it started goes too
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        reaped = true;
        reaped_at = Clock::now();
        out.end = why;
    };
    for (;;) {
        pollfd fds[2];
        nfds_t n = 0;
        for (int fd : {answer[0], log[0]})
            if (fd >= 0) fds[n++] = {fd, POLLIN, 0};
        constexpr int kPollMs = 20;
        const int ready = ::poll(n ? fds : nullptr, n, kPollMs);
        if (ready < 0 && errno != EINTR) break;
        if (answer[0] >= 0 && !read_available(answer[0], out.answer, o.max_answer_bytes, false))
            close_fd(answer[0]);
        if (log[0] >= 0 && !read_available(log[0], out.log, o.max_log_bytes, true))
            close_fd(log[0]);
        if (!reaped) {
            const pid_t r = ::waitpid(pid, &status, WNOHANG);
            if (r == pid) {
                reaped = true;
                reaped_at = Clock::now();
            }
        }
        if (reaped) {
            // Whatever it wrote is read; a grandchild that kept the pipes open is not waited for.
            if ((answer[0] < 0 && log[0] < 0) ||
                Clock::now() - reaped_at > std::chrono::milliseconds(200))
                break;
            continue;
        }
        if (o.stop && o.stop->load())
            kill_child(ChildOutcome::End::Stopped);
        else if (Clock::now() - start >= limit)
            kill_child(ChildOutcome::End::TimedOut);
    }
    close_fd(answer[0]);
    close_fd(log[0]);
    if (!reaped) {
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (out.end == ChildOutcome::End::Exited) {
        if (WIFSIGNALED(status)) {
            out.end = ChildOutcome::End::Signalled;
            out.signal = WTERMSIG(status);
        } else if (WIFEXITED(status)) {
            out.exit_code = WEXITSTATUS(status);
        }
    }
    return out;
}

std::string current_executable() {
    std::string path(4096, '\0');
    const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
    if (n <= 0) throw std::runtime_error("cannot find this program's executable (/proc/self/exe)");
    path.resize(static_cast<size_t>(n));
    return path;
}

std::string signal_name(int signal) {
    switch (signal) {
        case SIGSEGV:
            return "SIGSEGV";
        case SIGABRT:
            return "SIGABRT";
        case SIGBUS:
            return "SIGBUS";
        case SIGFPE:
            return "SIGFPE";
        case SIGILL:
            return "SIGILL";
        case SIGKILL:
            return "SIGKILL";
        case SIGTERM:
            return "SIGTERM";
        case SIGINT:
            return "SIGINT";
        case SIGALRM:
            return "SIGALRM";
        case SIGXCPU:
            return "SIGXCPU";
        case SIGPIPE:
            return "SIGPIPE";
        case SIGTRAP:
            return "SIGTRAP";
        case SIGSYS:
            return "SIGSYS";
        default:
            return "signal " + std::to_string(signal);
    }
}

std::uint64_t physical_memory_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return 0;
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

std::string limit_this_process(std::uint64_t address_space_bytes, double seconds, long parent) {
    std::string problems;
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (parent > 0 && ::getppid() != static_cast<pid_t>(parent))
        ::_exit(125);  // the parent died before the death signal was set
#endif
    if (seconds > 0) ::alarm(static_cast<unsigned>(std::ceil(seconds)));
#if defined(__SANITIZE_ADDRESS__)
    // An AddressSanitizer build reserves terabytes of address space for its shadow memory at
    // start-up, so no address-space limit can hold: the sanitizer builds check without it.
    address_space_bytes = 0;
#endif
    if (address_space_bytes > 0) {
        rlimit rl{};
        ::getrlimit(RLIMIT_AS, &rl);
        const rlim_t want = static_cast<rlim_t>(address_space_bytes);
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : std::min(want, rl.rlim_max);
        if (::setrlimit(RLIMIT_AS, &rl) != 0)
            problems = std::string("RLIMIT_AS: ") + std::strerror(errno);
    }
    return problems;
}

}  // namespace liftlab
