// A numeric CSV table with a header row, for users' own tabular data.
#pragma once
#include <string>
#include <vector>

namespace liftlab {

struct CsvTable {
    std::vector<std::string> columns;
    std::vector<std::vector<double>> rows;
};

// Reads a comma-separated file whose first line names the columns. Every other non-empty line
// must have as many fields as the header, each a finite number. Throws DataError naming the file,
// the line and the column on the first problem (missing file, ragged row, NaN/inf, non-number).
CsvTable read_csv_table(const std::string& path);

}  // namespace liftlab
