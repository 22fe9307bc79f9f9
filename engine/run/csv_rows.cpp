#include "run/csv_rows.h"

#include "core/bounded_input.h"

namespace liftlab {

std::string csv_cell(std::string_view cell) {
    if (cell.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(cell);
    std::string out = "\"";
    for (const char c : cell) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string csv_row(std::initializer_list<std::string_view> cells) {
    std::string line;
    bool first = true;
    for (const auto& c : cells) {
        if (!first) line += ',';
        first = false;
        line += csv_cell(c);
    }
    line += '\n';
    return line;
}

bool split_csv_line(std::string_view line, std::vector<std::string>& cells) {
    cells.clear();
    size_t pos = 0;
    while (true) {
        std::string cell;
        if (pos < line.size() && line[pos] == '"') {
            ++pos;
            while (true) {
                if (pos >= line.size()) return false;  // not closed
                if (line[pos] == '"') {
                    if (pos + 1 < line.size() && line[pos + 1] == '"') {
                        cell += '"';
                        pos += 2;
                        continue;
                    }
                    ++pos;
                    break;
                }
                cell += line[pos++];
            }
            if (pos < line.size() && line[pos] != ',') return false;
        } else {
            const size_t comma = line.find(',', pos);
            const size_t end = comma == std::string_view::npos ? line.size() : comma;
            cell.assign(line.substr(pos, end - pos));
            pos = end;
        }
        cells.push_back(std::move(cell));
        if (pos >= line.size()) return true;
        ++pos;  // the comma
    }
}

bool report_csv_issue(std::vector<DataError>* issues, const std::string& path, int line,
                      const std::string& what, const char* left_out) {
    if (!issues) throw DataError(path, line, what);
    issues->emplace_back(path, line, what + ": " + left_out);
    return false;
}

std::vector<CsvLine> read_csv_rows(const std::string& path, const char* header, size_t columns,
                                   std::vector<DataError>* issues, std::uint64_t max_bytes) {
    const std::string text = read_regular_file(path, max_bytes);
    std::vector<CsvLine> rows;
    size_t pos = 0;
    int line_no = 0;
    std::vector<std::string> cells;
    while (pos < text.size()) {
        const size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) break;  // the cut-off last row of a killed writer
        std::string_view line(text.data() + pos, nl - pos);
        pos = nl + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line_no == 1) {
            if (line != header) {
                report_csv_issue(
                    issues, path, 1,
                    "header '" + std::string(line.substr(0, 80)) + "' is not '" + header + "'",
                    "file left out");
                return {};
            }
            continue;
        }
        if (line.empty()) continue;
        if (!split_csv_line(line, cells)) {
            report_csv_issue(issues, path, line_no, "a quoted cell is not closed");
            continue;
        }
        if (cells.size() != columns) {
            report_csv_issue(
                issues, path, line_no,
                std::to_string(cells.size()) + " fields, " + std::to_string(columns) + " expected");
            continue;
        }
        rows.push_back({line_no, cells});
    }
    return rows;
}

}  // namespace liftlab
