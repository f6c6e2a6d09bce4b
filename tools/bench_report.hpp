// What `actorrec bench` does with the bench programs: runs one as a child
// process with its output shown and kept in a file, reads the CSV table it
// wrote, and draws a column of it as an SVG bar chart.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.hpp"

namespace actorrec {

// Runs argv (argv[0] a path) with stdout and stderr copied both to this
// process's stdout and to `log_path`. Returns the child's exit code (128 +
// N when signal N ended it), or IoError when it could not start.
Result<int> RunShown(const std::vector<std::string>& argv, const std::string& log_path);

// A CSV file with a header line, split at commas (no quoting: the bench
// programs write none). InvalidArgument naming the file and line when a row
// has a different width than the header.
struct CsvRows {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Index of `name` in the header, or -1.
  int Column(const std::string& name) const;
};
Result<CsvRows> ReadCsv(const std::string& path);

// A horizontal bar chart: one bar per (label, value), the value printed at
// its end. Values must be finite and >= 0.
std::string BarChartSvg(const std::string& title, const std::string& unit,
                        const std::vector<std::pair<std::string, double>>& bars);

}  // namespace actorrec
