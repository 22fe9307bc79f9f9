// Fuzz targets hand the fuzzer's bytes to readers that take a path: a private scratch file (one
// per process, in /dev/shm when there is one — a RAM file system: on /tmp the fuzzers spent most
// of their time waiting for the disk — else /tmp), rewritten for every input.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace liftlab::fuzz {

inline std::string scratch_dir() {
    static const std::string dir = [] {
        struct stat shm {};
        const bool ram = ::stat("/dev/shm", &shm) == 0 && S_ISDIR(shm.st_mode);
        std::string d =
            std::string(ram ? "/dev/shm" : "/tmp") + "/liftlab-fuzz-" + std::to_string(::getpid());
        ::mkdir(d.c_str(), 0700);
        return d;
    }();
    return dir;
}

// Writes `size` bytes to scratch_dir()/name and returns the path.
inline std::string write_scratch(const std::string& name, const uint8_t* data, size_t size) {
    const std::string path = scratch_dir() + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();  // the harness itself is broken
    if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return path;
}

}  // namespace liftlab::fuzz
