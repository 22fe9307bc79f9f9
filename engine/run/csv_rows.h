// The run folder's CSV rules, in one place for its writers (run/run_store) and its readers
// (run/run_files): comma-separated cells, one row per line ending in '\n', a header line first. A
// cell holding a comma, a double quote or a line break is written in double quotes with its quotes
// doubled (RFC 4180); every other cell is written as it is. Numbers are formatted and parsed by
// core/c_numbers.h, never by the locale. Torch-free and Qt-free (CMake target liftlab_run_schema).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"

namespace liftlab {

// `cell` as written in a row: quoted when it holds ',', '"', '\r' or '\n'.
std::string csv_cell(std::string_view cell);

// The cells joined by commas (each through csv_cell), then '\n'.
std::string csv_row(std::initializer_list<std::string_view> cells);

// Splits one line (without its '\n') into `cells`; false, with `cells` unspecified, when a quoted
// cell is not closed or a closing quote is followed by anything but a comma.
bool split_csv_line(std::string_view line, std::vector<std::string>& cells);

// One complete row of a CSV file: its 1-based line in the file and its cells.
struct CsvLine {
    int line = 0;
    std::vector<std::string> cells;
};

// run/*.csv files larger than this are refused (a long run writes megabytes; a hostile one must
// not exhaust memory).
constexpr std::uint64_t kMaxRunCsvBytes = std::uint64_t{4} << 30;

// The rows of the CSV file `path` after its header line, which must be `header`; each has
// `columns` cells. The last line without its newline — a row cut by a killed writer — is not a
// row; a blank line is skipped. Reading is bounded (core/bounded_input.h: regular file, at most
// `max_bytes`; a missing file is a DataError).
//
// A wrong header or a row with another number of cells is a DataError naming the file and the
// line. With `issues` null it is thrown; otherwise it is appended to `issues` and the row (for a
// wrong header: the whole file) is left out, so that a reader can show the rest of a damaged file.
std::vector<CsvLine> read_csv_rows(const std::string& path, const char* header, size_t columns,
                                   std::vector<DataError>* issues = nullptr,
                                   std::uint64_t max_bytes = kMaxRunCsvBytes);

// A malformed row: DataError(path, line, what) thrown when `issues` is null, else recorded there
// with ": <left_out>" added. Returns false (for `if (!ok) { report(...); continue; }`).
bool report_csv_issue(std::vector<DataError>* issues, const std::string& path, int line,
                      const std::string& what, const char* left_out = "row left out");

}  // namespace liftlab
