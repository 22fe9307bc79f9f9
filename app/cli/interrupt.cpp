#include "interrupt.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "core/activity.h"

namespace liftlab::cli {

namespace {

std::atomic<bool> g_stop_flag{false};
std::atomic<int> g_sigints{0};
int g_wake_fds[2] = {-1, -1};
constexpr char kWakeStop = 1, kWakeQuit = 0;

extern "C" void on_cli_sigint(int) {
    if (g_sigints.fetch_add(1) >= 1) {
        static const char bye[] =
            "\nliftlab-cli: second Ctrl-C: quitting now (exit 130); a run folder resumes from its "
            "last saved state with liftlab-cli run --resume DIR\n";
        [[maybe_unused]] const auto n = ::write(STDERR_FILENO, bye, sizeof bye - 1);
        ::_exit(130);
    }
    g_stop_flag = true;
    [[maybe_unused]] const auto n = ::write(g_wake_fds[1], &kWakeStop, 1);
}

}  // namespace

InterruptHandler::InterruptHandler(std::string what, std::string after) {
    g_stop_flag = false;
    g_sigints = 0;
    if (::pipe2(g_wake_fds, O_CLOEXEC) != 0) {
        g_wake_fds[0] = g_wake_fds[1] = -1;
        std::signal(SIGINT, SIG_DFL);
        return;
    }
    watcher_ = std::thread([what = std::move(what), after = std::move(after)] {
        char byte = kWakeQuit;
        while (::read(g_wake_fds[0], &byte, 1) < 0) {
        }
        if (byte != kWakeStop) return;
        const std::string doing = current_activity();
        const std::string now = doing.empty() ? "" : " (now: " + doing + ")";
        std::fprintf(stderr,
                     "\nliftlab-cli: Ctrl-C: stopping %s%s; %s. Press Ctrl-C again to quit at "
                     "once.\n",
                     what.c_str(), now.c_str(), after.c_str());
        std::fflush(stderr);
    });
    struct sigaction sa {};
    sa.sa_handler = on_cli_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &sa, nullptr);
}

InterruptHandler::~InterruptHandler() {
    std::signal(SIGINT, SIG_DFL);
    if (watcher_.joinable()) {
        if (!g_stop_flag) {
            [[maybe_unused]] const auto n = ::write(g_wake_fds[1], &kWakeQuit, 1);
        }
        watcher_.join();
    }
    for (int& fd : g_wake_fds) {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
}

const std::atomic<bool>* InterruptHandler::flag() const {
    return &g_stop_flag;
}

bool InterruptHandler::interrupted() const {
    return g_stop_flag.load();
}

}  // namespace liftlab::cli
