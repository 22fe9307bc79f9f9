// An exclusive lock on a run folder (resume/lock, flock): held by the process writing the run, so
// that `liftlab-cli run --resume` never continues a run another process is still writing. The
// kernel drops it when the process dies, however it dies. The writer also records itself in the
// file ("<host name> <pid>\n"), so that the window can tell a killed run (that process is gone)
// from a live one at once (widgets/run_folder_info).
#pragma once
#include <string>

namespace liftlab {

class FolderLock {
public:
    // Takes the lock of run folder `dir`; throws std::runtime_error naming the folder when another
    // process holds it, WriteError when the lock file cannot be made. `writer`: this process is
    // about to write the run, and says so in the file; a probe (is anyone writing?) leaves the
    // file as it is.
    explicit FolderLock(const std::string& dir, bool writer = false);
    ~FolderLock();
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

private:
    int fd_ = -1;
};

}  // namespace liftlab
