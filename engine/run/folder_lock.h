// An exclusive lock on a run folder (resume/lock, flock): held by the process writing the run, so
// that `liftlab-cli run --resume` never continues a run another process is still writing. The
// kernel drops it when the process dies, however it dies.
#pragma once
#include <string>

namespace liftlab {

class FolderLock {
public:
    // Takes the lock of run folder `dir`; throws std::runtime_error naming the folder when another
    // process holds it, WriteError when the lock file cannot be made.
    explicit FolderLock(const std::string& dir);
    ~FolderLock();
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

private:
    int fd_ = -1;
};

}  // namespace liftlab
