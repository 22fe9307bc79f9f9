#include "run/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/errors.h"
#include "run/run_folder_schema.h"

namespace liftlab {

FolderLock::FolderLock(const std::string& dir, bool writer) {
    const std::string folder = dir + "/" + run_folder::kResume;
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec) throw WriteError(folder, ec.message());
    const std::string file = dir + "/" + run_folder::kResumeLock;
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw WriteError(file, std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(fd_);
        fd_ = -1;
        if (err == EWOULDBLOCK)
            throw std::runtime_error(
                dir + " is being written by another LiftLab process (it holds " + file + ")");
        throw WriteError(file, std::strerror(err));
    }
    if (!writer) return;
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    const std::string owner = std::string(host) + " " + std::to_string(::getpid()) + "\n";
    // Best effort: the lock itself is what keeps a resume out; the note only speeds the window.
    if (::ftruncate(fd_, 0) == 0) {
        const ssize_t n = ::pwrite(fd_, owner.data(), owner.size(), 0);
        (void)n;
    }
}

FolderLock::~FolderLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace liftlab
