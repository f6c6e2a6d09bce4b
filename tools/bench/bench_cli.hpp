// The bench programs' command lines: CLI11 (as `actorrec` uses), so that
// every program has --help and every bad argument is an error that names it
// and exits 2 instead of running with a default or crashing; and the CSV
// file a program writes its table to with --csv (read by `actorrec bench`).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace actorrec::bench {

// Parses argv into `app`. Returns -1 when the program should go on, else its
// exit code: 0 after --help (the help went to stdout), 2 after a bad
// argument (the message, naming it, went to stderr).
inline int ParseArgs(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return -1;
}

// Adds --csv FILE to `app`.
inline void AddCsvFlag(CLI::App& app, std::string* path) {
  app.add_option("--csv", *path, "also write the table's rows to this CSV file (header first)");
}

// One CSV file: a header, then rows of the same width. With an empty path
// nothing is written. A comma inside a field becomes a semicolon (no
// quoting: `actorrec bench` splits at commas).
class CsvTable {
 public:
  // Exits 1 naming the file when it cannot be created.
  CsvTable(const std::string& path, const std::vector<std::string>& header) {
    if (path.empty()) return;
    file_.open(path, std::ios::trunc);
    if (!file_) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      std::exit(1);
    }
    Row(header);
  }
  void Row(const std::vector<std::string>& fields) {
    if (!file_.is_open()) return;
    for (size_t i = 0; i < fields.size(); ++i) {
      std::string field = fields[i];
      for (char& c : field) c = c == ',' ? ';' : c;
      file_ << (i ? "," : "") << field;
    }
    file_ << "\n";
    file_.flush();
  }

 private:
  std::ofstream file_;
};

// A number as CSV text.
inline std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace actorrec::bench
