#include "run/run_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/bounded_input.h"
#include "core/errors.h"
#include "core/path_component.h"
#include "core/sha256.h"

namespace liftlab {

namespace fs = std::filesystem;

namespace {

std::string errno_text() {
    return std::strerror(errno);
}

// write(2) until everything is out, at most kIoChunkBytes per call (core/bounded_input.h: a
// long call holds its core); false with errno set on failure.
bool write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, std::min(size, kIoChunkBytes));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        data += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

// Appends `text` to a stdio stream; a short write is a WriteError naming the file.
void put(std::FILE* f, const std::string& text, const std::string& file) {
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size())
        throw WriteError(file, errno ? errno_text() : "short write");
}

void flush(std::FILE* f, const std::string& file) {
    errno = 0;
    if (std::fflush(f) != 0) throw WriteError(file, errno ? errno_text() : "flush failed");
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content, bool durable) {
    // temp file → write → fsync → close → rename → fsync of the folder: after a crash the file
    // is either the old or the new content, never a mixture or empty.
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw WriteError(tmp, errno_text());
    auto fail = [&](const std::string& what) {
        ::unlink(tmp.c_str());
        throw WriteError(path, what);
    };
    if (!write_all(fd, content.data(), content.size())) {
        const std::string what = errno_text();
        ::close(fd);
        fail(what);
    }
    if (durable && ::fsync(fd) != 0) {
        const std::string what = "fsync: " + errno_text();
        ::close(fd);
        fail(what);
    }
    if (::close(fd) != 0) fail("close: " + errno_text());
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename: " + errno_text());
    if (!durable) return;
    std::string dir = fs::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        // Some file systems refuse fsync on a folder (EINVAL); the rename itself has happened.
        if (::fsync(dfd) != 0 && errno != EINVAL && errno != EROFS) {
            const std::string what = "fsync of the folder: " + errno_text();
            ::close(dfd);
            throw WriteError(dir, what);
        }
        ::close(dfd);
    }
}

void append_file(const std::string& path, const std::string& content) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw WriteError(path, errno_text());
    if (!write_all(fd, content.data(), content.size())) {
        const std::string what = errno_text();
        ::close(fd);
        throw WriteError(path, what);
    }
    if (::close(fd) != 0) throw WriteError(path, "close: " + errno_text());
}

namespace {

// `<name>-YYYYmmdd-HHMMSS` of now.
std::string stamped(const std::string& name) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    return name + "-" + stamp;
}

}  // namespace

RunStore RunStore::create_staged(const std::string& parent, const std::string& name) {
    if (parent.empty()) throw std::invalid_argument("RunStore::create: empty parent folder");
    if (!is_safe_path_component(name))
        throw std::invalid_argument("run name '" + name +
                                    "' is not a single path component of [A-Za-z0-9-_.@=]");
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw WriteError(parent, "cannot create the folder: " + ec.message());
    // Hidden and unique to this process: no reader of `parent` mistakes it for a run folder.
    const std::string base =
        (fs::path(parent) / ("." + stamped(name) + ".partial-" + std::to_string(::getpid())))
            .string();
    std::string dir = base;
    for (int i = 2;; ++i) {
        if (fs::create_directory(dir, ec)) break;
        if (ec) throw WriteError(dir, "cannot create the run folder: " + ec.message());
        dir = base + "-" + std::to_string(i);
    }
    RunStore store(dir);
    store.staged_name_ = stamped(name);
    return store;
}

void RunStore::publish() {
    if (staged_name_.empty()) return;
    const fs::path parent = fs::path(dir_).parent_path();
    const std::string base = (parent / staged_name_).string();
    std::string target = base;
    for (int i = 2;; ++i) {
        // Never onto an existing folder (a plain rename would replace an empty one).
        if (::renameat2(AT_FDCWD, dir_.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0)
            break;
        if (errno != EEXIST && errno != ENOTEMPTY)
            throw WriteError(target, "cannot publish the run folder: " + errno_text());
        target = base + "-" + std::to_string(i);
    }
    dir_ = target;  // open files follow the folder (same inodes)
    staged_name_.clear();
}

RunStore RunStore::create(const std::string& parent, const std::string& name) {
    if (parent.empty()) throw std::invalid_argument("RunStore::create: empty parent folder");
    // The folder must be a child of `parent`: a name with '/' or '..' would lead elsewhere.
    if (!is_safe_path_component(name))
        throw std::invalid_argument("run name '" + name +
                                    "' is not a single path component of [A-Za-z0-9-_.@=]");
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw WriteError(parent, "cannot create the folder: " + ec.message());
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    const std::string base = (fs::path(parent) / (name + "-" + stamp)).string();
    std::string dir = base;
    for (int i = 2;; ++i) {
        if (fs::create_directory(dir, ec)) break;
        if (ec) throw WriteError(dir, "cannot create the run folder: " + ec.message());
        dir = base + "-" + std::to_string(i);
    }
    return RunStore(dir);
}

RunStore::RunStore(std::string dir) : dir_(std::move(dir)) {
    // metrics.csv is there from the start (with its header), the other files from their first row.
    append_csv(metrics_, run_folder::kMetrics, run_folder::kMetricsColumns, "");
}

RunStore::RunStore(RunStore&& other) noexcept
    : dir_(std::move(other.dir_)),
      staged_name_(std::move(other.staged_name_)),
      metrics_(other.metrics_),
      spectra_(other.spectra_),
      traces_(other.traces_),
      dwells_(other.dwells_),
      events_(other.events_) {
    other.events_ = nullptr;
    other.metrics_ = nullptr;
    other.spectra_ = nullptr;
    other.traces_ = nullptr;
    other.dwells_ = nullptr;
}

RunStore::~RunStore() {
    for (std::FILE* f : {metrics_, spectra_, traces_, dwells_, events_})
        if (f) std::fclose(f);  // errors were seen by close() on the normal path
}

void RunStore::close() {
    const std::pair<std::FILE**, const char*> files[] = {{&metrics_, run_folder::kMetrics},
                                                         {&spectra_, run_folder::kSpectra},
                                                         {&traces_, run_folder::kTraces},
                                                         {&dwells_, run_folder::kDwells},
                                                         {&events_, run_folder::kEvents}};
    std::string error;
    for (auto [f, name] : files) {
        if (!*f) continue;
        errno = 0;
        const bool ok = std::fflush(*f) == 0 && ::fsync(fileno(*f)) == 0;
        const std::string why = errno ? errno_text() : "close failed";
        if ((std::fclose(*f) != 0 || !ok) && error.empty()) error = path(name) + "|" + why;
        *f = nullptr;
    }
    if (!error.empty()) {
        const auto bar = error.find('|');
        throw WriteError(error.substr(0, bar), error.substr(bar + 1));
    }
}

void RunStore::append_csv(std::FILE*& stream, const char* name, const char* columns,
                          const std::string& rows) {
    const std::string file = path(name);
    if (!stream) {
        // A resumed run's file keeps its rows; a new or empty one gets its header.
        const bool fresh = !fs::exists(file) || fs::file_size(file) == 0;
        stream = std::fopen(file.c_str(), "a");
        if (!stream) throw WriteError(file, errno_text());
        if (fresh) put(stream, std::string(columns) + "\n", file);
    }
    if (!rows.empty()) put(stream, rows, file);
    flush(stream, file);
}

void RunStore::append_traces(const std::vector<TracePoint>& traces) {
    if (traces.empty()) return;
    append_csv(traces_, run_folder::kTraces, run_folder::kTracesColumns,
               format_traces_rows(traces));
}

void RunStore::append_dwells(const std::string& method, uint64_t seed,
                             const std::vector<int64_t>& dwells) {
    if (dwells.empty()) return;
    append_csv(dwells_, run_folder::kDwells, run_folder::kDwellsColumns,
               format_dwells_rows(method, seed, dwells));
}

void RunStore::append_events(const std::vector<EventRow>& events) {
    if (events.empty()) return;
    append_csv(events_, run_folder::kEvents, run_folder::kEventsColumns,
               format_events_rows(events));
}

void RunStore::append_spectra(const std::vector<SpectrumPoint>& spectra) {
    if (spectra.empty()) return;
    append_csv(spectra_, run_folder::kSpectra, run_folder::kSpectraColumns,
               format_spectra_rows(spectra));
}

const std::vector<const char*>& RunStore::shared_files() {
    static const std::vector<const char*> files = {run_folder::kMetrics, run_folder::kSpectra,
                                                   run_folder::kTraces, run_folder::kDwells,
                                                   run_folder::kEvents};
    return files;
}

std::pair<std::FILE**, const char*> RunStore::shared_stream(size_t i) {
    switch (i) {
        case 0:
            return {&metrics_, run_folder::kMetricsColumns};
        case 1:
            return {&spectra_, run_folder::kSpectraColumns};
        case 2:
            return {&traces_, run_folder::kTracesColumns};
        case 3:
            return {&dwells_, run_folder::kDwellsColumns};
        default:
            return {&events_, run_folder::kEventsColumns};
    }
}

void RunStore::append_rows_of(const std::string& held_dir) {
    const auto& names = shared_files();
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string file = held_dir + "/" + names[i];
        std::error_code ec;
        if (!fs::exists(file, ec)) continue;
        std::ifstream in(file, std::ios::binary);
        if (!in) throw WriteError(file, "cannot read the rows written aside");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (in.bad()) throw WriteError(file, "cannot read the rows written aside");
        const auto header_end = text.find('\n');
        if (header_end == std::string::npos || header_end + 1 == text.size()) continue;
        auto [stream, columns] = shared_stream(i);
        append_csv(*stream, names[i], columns, text.substr(header_end + 1));
    }
}

std::vector<std::uint64_t> RunStore::shared_sizes() const {
    return shared_sizes_in(dir_);
}

std::vector<std::uint64_t> RunStore::shared_sizes_in(const std::string& dir) {
    std::vector<std::uint64_t> out;
    for (const char* name : shared_files()) {
        std::error_code ec;
        const auto size = fs::file_size(dir + "/" + name, ec);
        out.push_back(ec ? 0 : static_cast<std::uint64_t>(size));
    }
    return out;
}

std::string RunStore::spec_sha256() const {
    if (spec_sha256_.empty()) try {
            spec_sha256_ =
                spec_file_sha256(read_regular_file(path(run_folder::kSpec), kMaxJsonFileBytes));
        } catch (const DataError&) {
            return {};
        }
    return spec_sha256_;
}

void RunStore::record_live_events(const nlohmann::json& live_events) const {
    const std::string file = path(run_folder::kSpec);
    const std::string text = read_regular_file(file, kMaxJsonFileBytes);
    if (spec_sha256_.empty()) spec_sha256_ = spec_file_sha256(text);  // as it started
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) throw DataError(file, 0, "is not a JSON object");
    j["live_events"] = live_events;
    write_json(run_folder::kSpec, j);
}

std::string spec_file_sha256(const std::string& text) {
    if (text.find("\"live_events\"") != std::string::npos) {
        nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (j.is_object() && j.contains("live_events")) {
            j.erase("live_events");
            return hex_sha256(j.dump(2) + "\n");  // RunStore::write_json's form
        }
    }
    return hex_sha256(text);
}

void RunStore::write_json(const std::string& file, const nlohmann::json& j) const {
    write_file_atomic(path(file), j.dump(2) + "\n");
}

void RunStore::append_metrics(const std::vector<MetricPoint>& points) {
    append_csv(metrics_, run_folder::kMetrics, run_folder::kMetricsColumns,
               format_metrics_rows(points));
}

}  // namespace liftlab
