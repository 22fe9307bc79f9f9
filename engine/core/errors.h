// Error types of the engine. Every message names what is wrong: the spec key, or file and line.
#pragma once
#include <stdexcept>
#include <string>

namespace liftlab {

// A bad experiment spec: unknown key, wrong type, out-of-range value. `key` is the dotted path.
class SpecError : public std::runtime_error {
public:
    SpecError(std::string key, const std::string& what)
        : std::runtime_error("spec key '" + key + "': " + what), key_(std::move(key)) {}
    const std::string& key() const { return key_; }

private:
    std::string key_;
};

// A bad data file. `line` is 1-based, 0 when the problem is the file as a whole.
class DataError : public std::runtime_error {
public:
    DataError(std::string file, int line, const std::string& what)
        : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " +
                             what),
          file_(std::move(file)),
          line_(line) {}
    const std::string& file() const { return file_; }
    int line() const { return line_; }

private:
    std::string file_;
    int line_;
};

// A write to a run folder failed (disk full, file size limit, I/O error). The run cannot be
// recorded faithfully: it ends with status `failed` and liftlab-cli exits with code 3.
class WriteError : public std::runtime_error {
public:
    WriteError(std::string file, const std::string& what)
        : std::runtime_error("cannot write " + file + ": " + what), file_(std::move(file)) {}
    const std::string& file() const { return file_; }

private:
    std::string file_;
};

}  // namespace liftlab
