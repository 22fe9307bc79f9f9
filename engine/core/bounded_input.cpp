#include "core/bounded_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/errors.h"

namespace liftlab {

namespace {

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1,
// column 3: "; keep only what a user needs.
std::string plain_parse_message(const std::string& what) {
    std::string m = what;
    const auto bracket = m.find("] ");
    if (m.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos)
        m = m.substr(bracket + 2);
    const auto colon = m.find(": ");
    if (m.rfind("parse error at line", 0) == 0 && colon != std::string::npos)
        m = m.substr(colon + 2);
    return m;
}

}  // namespace

int line_of_offset(const std::string& text, std::size_t offset) {
    const std::size_t upto = std::min(offset, text.size());
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + upto, '\n'));
}

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes) {
    // O_NONBLOCK: opening a FIFO without a writer must not hang; it is then refused by fstat.
    Fd f;
    f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (f.fd < 0) throw DataError(path, 0, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0)
        throw DataError(path, 0, std::string("cannot stat: ") + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw DataError(path, 0, "is a folder, not a file");
    if (!S_ISREG(st.st_mode))
        throw DataError(path, 0, "is not a regular file (a FIFO, socket or device is not read)");
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
        throw DataError(path, 0,
                        "is too large (" + std::to_string(st.st_size) + " bytes, at most " +
                            std::to_string(max_bytes) + " are read)");
    std::string out(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t done = 0;
    while (done < out.size()) {
        const ssize_t got =
            ::read(f.fd, out.data() + done, std::min(out.size() - done, kIoChunkBytes));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw DataError(path, 0, std::string("read error: ") + std::strerror(errno));
        if (got == 0) break;  // shrank while we read: keep what is there
        done += static_cast<std::size_t>(got);
    }
    out.resize(done);
    return out;
}

void check_json_depth(const std::string& text, const std::string& where, int max_depth) {
    // Nesting is checked on the text, before any tree exists: brackets outside strings.
    int depth = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                throw DataError(
                    where, line_of_offset(text, i),
                    "JSON nested deeper than " + std::to_string(max_depth) + " levels (refused)");
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
}

nlohmann::json parse_json_bounded(const std::string& text, const std::string& where,
                                  int max_depth) {
    check_json_depth(text, where, max_depth);
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw DataError(where, line_of_offset(text, e.byte == 0 ? 0 : e.byte - 1),
                        "invalid JSON: " + plain_parse_message(e.what()));
    } catch (const nlohmann::json::exception& e) {
        // e.g. "number overflow parsing '1e400'": find the quoted token for a line number.
        const std::string m = plain_parse_message(e.what());
        int line = 0;
        const auto open = m.find('\''), close = m.rfind('\'');
        if (open != std::string::npos && close > open + 1) {
            const auto at = text.find(m.substr(open + 1, close - open - 1));
            if (at != std::string::npos) line = line_of_offset(text, at);
        }
        throw DataError(where, line, "invalid JSON: " + m);
    }
}

nlohmann::json read_json_file(const std::string& path, std::uint64_t max_bytes) {
    return parse_json_bounded(read_regular_file(path, max_bytes), path);
}

}  // namespace liftlab
