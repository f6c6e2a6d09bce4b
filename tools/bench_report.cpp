// Child processes, CSV tables and SVG bar charts for `actorrec bench`.
#include "tools/bench_report.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace actorrec {
namespace {

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

}  // namespace

Result<int> RunShown(const std::vector<std::string>& argv, const std::string& log_path) {
  std::ofstream log(log_path, std::ios::trunc | std::ios::binary);
  if (!log) return Status::IoError("cannot write " + log_path);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return Status::IoError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::cout.write(buf, n).flush();
    log.write(buf, n);
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

int CsvRows::Column(const std::string& name) const {
  auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

Result<CsvRows> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot open");
  CsvRows csv;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    std::vector<std::string> fields = Split(line);
    if (csv.header.empty()) {
      csv.header = std::move(fields);
    } else if (fields.size() != csv.header.size()) {
      return Status::InvalidArgument(path + ":" + std::to_string(number) + ": " + std::to_string(fields.size()) +
                                     " fields, the header has " + std::to_string(csv.header.size()));
    } else {
      csv.rows.push_back(std::move(fields));
    }
  }
  if (csv.header.empty()) return Status::InvalidArgument(path + ": empty, no header line");
  return csv;
}

std::string BarChartSvg(const std::string& title, const std::string& unit,
                        const std::vector<std::pair<std::string, double>>& bars) {
  const int label_w = 260, bar_w = 420, row_h = 22, top = 40;
  const int width = label_w + bar_w + 90, height = top + row_h * static_cast<int>(bars.size()) + 20;
  double most = 0;
  for (const auto& b : bars) most = std::max(most, b.second);
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"22\" font-size=\"14\" font-weight=\"bold\">" << Escape(title) << " (" << Escape(unit)
      << ")</text>\n";
  for (size_t i = 0; i < bars.size(); ++i) {
    const int y = top + static_cast<int>(i) * row_h;
    const double len = most > 0 ? bars[i].second / most * bar_w : 0.0;
    char value[32];
    std::snprintf(value, sizeof value, "%.4g", bars[i].second);
    svg << "<text x=\"" << label_w - 6 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">" << Escape(bars[i].first)
        << "</text>\n"
        << "<rect x=\"" << label_w << "\" y=\"" << y + 3 << "\" width=\"" << len << "\" height=\"" << row_h - 6
        << "\" fill=\"#4878a8\"/>\n"
        << "<text x=\"" << label_w + len + 4 << "\" y=\"" << y + 15 << "\">" << value << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace actorrec
