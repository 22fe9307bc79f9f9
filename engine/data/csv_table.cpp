#include "data/csv_table.h"

#include <cmath>
#include <fstream>
#include <limits>

#include "core/c_numbers.h"
#include "core/errors.h"

namespace liftlab {

namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        const size_t comma = line.find(',', start);
        out.push_back(trim(line.substr(start, comma == std::string::npos ? comma : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

}  // namespace

CsvTable read_csv_table(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw DataError(path, 0, "cannot open file (does it exist and is it readable?)");
    CsvTable table;
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (trim(line).empty()) continue;
        auto fields = split_fields(line);
        if (table.columns.empty()) {
            for (size_t i = 0; i < fields.size(); ++i)
                if (fields[i].empty())
                    throw DataError(path, line_no,
                                    "header column " + std::to_string(i + 1) + " has no name");
            for (size_t i = 0; i < fields.size(); ++i)
                for (size_t j = 0; j < i; ++j)
                    if (fields[i] == fields[j])
                        throw DataError(path, line_no,
                                        "header names column '" + fields[i] + "' twice (columns " +
                                            std::to_string(j + 1) + " and " +
                                            std::to_string(i + 1) + ")");
            table.columns = std::move(fields);
            continue;
        }
        if (fields.size() != table.columns.size())
            throw DataError(path, line_no,
                            "row has " + std::to_string(fields.size()) +
                                " fields, the header has " + std::to_string(table.columns.size()));
        std::vector<double> row(fields.size());
        for (size_t i = 0; i < fields.size(); ++i) {
            const std::string& f = fields[i];
            double v = 0;
            bool huge = false;
            // A decimal number by the C rules, whatever the locale ('.' as the decimal point);
            // one beyond a double is infinite, refused just below.
            if (!c_parse_double(f, &v, &huge)) {
                if (!huge)
                    throw DataError(
                        path, line_no,
                        "column '" + table.columns[i] + "': '" + f + "' is not a decimal number");
                v = std::numeric_limits<double>::infinity();
            }
            if (!std::isfinite(v))
                throw DataError(path, line_no,
                                "column '" + table.columns[i] + "': value '" + f +
                                    "' is not finite (NaN or infinity)");
            // The data are trained in single precision: a larger value would become infinite
            // there and show up as a "diverged" method instead of a data error.
            if (std::fabs(v) > std::numeric_limits<float>::max())
                throw DataError(path, line_no,
                                "column '" + table.columns[i] + "': value '" + f +
                                    "' is beyond single precision (|value| ≤ 3.4e38)");
            row[i] = v;
        }
        table.rows.push_back(std::move(row));
    }
    if (table.columns.empty()) throw DataError(path, 0, "file is empty (expected a header row)");
    if (table.rows.empty()) throw DataError(path, 0, "file has a header but no data rows");
    return table;
}

}  // namespace liftlab
