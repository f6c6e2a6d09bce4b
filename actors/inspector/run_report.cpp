// Rendering a run's metrics.jsonl as an HTML report with inline SVG.
#include "actors/inspector/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <sstream>
#include <vector>

#include "base/atomic_file.hpp"
#include "base/json_number.hpp"

namespace actorrec::inspector {
namespace {

std::string Event(std::string_view line) {
  const std::string needle = "{\"event\":\"";
  if (line.rfind(needle, 0) != 0) return {};
  const size_t end = line.find('"', needle.size());
  return end == std::string_view::npos ? "" : std::string(line.substr(needle.size(), end - needle.size()));
}

struct Attempt {
  int number = 0;
  uint64_t first_batch = 0;
  std::string started;
  uint64_t batches = 0;
  std::string summary;  // the summary line, if the attempt ended with one
};

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A line chart of (x, y) points as inline SVG, 720 × 220.
std::string LineSvg(const std::vector<std::pair<double, double>>& pts, const char* color, const char* label) {
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"220\" class=\"chart\" aria-label=\""
      << label << "\">";
  if (pts.empty()) return svg.str() + "<text x=\"60\" y=\"110\">no data</text></svg>";
  double x0 = pts.front().first, x1 = pts.front().first, y0 = pts.front().second, y1 = pts.front().second;
  for (const auto& [x, y] : pts) {
    x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  }
  if (x1 - x0 < 1) x1 = x0 + 1;
  if (y1 - y0 < 1e-9) y0 -= 0.01, y1 += 0.01;
  auto X = [&](double x) { return 60 + (x - x0) / (x1 - x0) * 650; };
  auto Y = [&](double y) { return 195 - (y - y0) / (y1 - y0) * 180; };
  svg.precision(5);
  svg << "<path d=\"M60 10V195H712\" stroke=\"#99a\" fill=\"none\"/>"
      << "<text x=\"2\" y=\"18\" font-size=\"11\">" << y1 << "</text><text x=\"2\" y=\"195\" font-size=\"11\">" << y0
      << "</text><text x=\"60\" y=\"214\" font-size=\"11\">" << x0 << "</text><text x=\"640\" y=\"214\" font-size=\"11\">"
      << x1 << " batches</text><polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << color << "\" points=\"";
  for (const auto& [x, y] : pts) svg << X(x) << "," << Y(y) << " ";
  svg << "\"/>";
  if (pts.size() == 1) svg << "<circle r=\"4\" fill=\"" << color << "\" cx=\"" << X(pts[0].first) << "\" cy=\"" << Y(pts[0].second) << "\"/>";
  return svg.str() + "</svg>";
}

constexpr std::pair<const char*, const char*> kPhases[] = {
    {"fetch", "#c84"},     {"forward", "#48c"},        {"backward", "#6ac"},    {"dense_sync", "#a6c"},
    {"exposed_delayed_sync", "#c6a"}, {"optimizer", "#8b5"}, {"sparse_sync", "#bb4"}, {"write_back", "#999"}};

// One horizontal stacked bar of a summary's ms_per_batch, as inline SVG.
std::string BreakdownSvg(const std::string& summary) {
  const size_t at = summary.find("\"ms_per_batch\":{");
  if (at == std::string::npos) return "";
  const std::string_view phases = std::string_view(summary).substr(at, summary.find('}', at) - at);
  double total = 0;
  std::vector<double> ms;
  for (const auto& [name, color] : kPhases) {
    ms.push_back(std::max(0.0, NumberField(phases, name).value_or(0)));
    total += ms.back();
  }
  std::ostringstream svg;
  svg.precision(4);
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"64\" class=\"breakdown\">";
  double x = 0;
  for (size_t i = 0; i < ms.size(); ++i) {
    const double w = total > 0 ? ms[i] / total * 716 : 0;
    svg << "<rect x=\"" << 2 + x << "\" y=\"4\" height=\"24\" width=\"" << w << "\" fill=\"" << kPhases[i].second
        << "\"><title>" << kPhases[i].first << " " << ms[i] << " ms</title></rect>";
    x += w;
  }
  x = 2;
  for (size_t i = 0; i < ms.size(); ++i) {
    if (ms[i] <= 0) continue;
    svg << "<rect x=\"" << x << "\" y=\"40\" width=\"10\" height=\"10\" fill=\"" << kPhases[i].second
        << "\"/><text x=\"" << x + 13 << "\" y=\"49\" font-size=\"11\">" << kPhases[i].first << " " << ms[i]
        << "</text>";
    x += 26 + 7 * (std::string(kPhases[i].first).size() + 6);
  }
  return svg.str() + "</svg>";
}

// The objects of the array `key` in a flat line of ours: each from its "{" to
// the next object's (or the array's end), for NumberOf.
std::vector<std::string_view> ObjectsOf(std::string_view line, std::string_view key, std::string_view first_key) {
  std::vector<std::string_view> out;
  std::string open = "\"";
  open.append(key).append("\":[");
  size_t at = line.find(open);
  if (at == std::string_view::npos) return out;
  const size_t end = line.find("]", at);
  std::string item = "{\"";
  item.append(first_key).append("\":");
  for (at = line.find(item, at); at != std::string_view::npos && at < end;) {
    size_t next = line.find(item, at + 1);
    const size_t stop = next == std::string_view::npos ? end : std::min(next, end);
    out.push_back(line.substr(at, stop - at));
    at = next;
  }
  return out;
}

// The last attempt's cache partitions, shards and GEMM rate (the
// inspector's figures at the end, its "inspector" line) as HTML tables.
std::string PartsHtml(std::string_view line) {
  std::ostringstream html;
  html << std::fixed << std::setprecision(1);  // MB, %, GFLOP/s; counts are integers
  auto num = [](std::string_view obj, const char* key) { return NumberField(obj, key).value_or(0); };
  auto count = [&](std::string_view obj, const char* key) { return std::llround(num(obj, key)); };
  auto mb = [](double bytes) { return bytes / 1e6; };
  html << "<h2>Cache partitions at the end</h2><table><tr><th>trainer</th><th>occupancy (slots)</th><th>hit share</th>"
          "<th>MB shards → partition</th><th>MB partition → shards</th><th>MB sync</th></tr>";
  for (std::string_view t : ObjectsOf(line, "trainers", "trainer")) {
    html << "<tr><td>trainer[" << count(t, "trainer") << "]</td><td>" << count(t, "occupancy") << " / " << count(t, "slots")
         << "</td><td>" << num(t, "hit_share") * 100 << " %</td><td>"
         << mb(num(t, "shards_to_partition")) << "</td><td>" << mb(num(t, "partition_to_shards")) << "</td><td>"
         << mb(num(t, "sync")) << "</td></tr>";
  }
  html << "</table>\n";
  const auto shards = ObjectsOf(line, "shards", "shard");
  if (!shards.empty()) {
    html << "<h2>Embedding shards</h2><table><tr><th>shard</th><th>rows resident</th><th>MB</th></tr>";
    for (std::string_view s : shards) {
      html << "<tr><td>embedding_shard[" << count(s, "shard") << "]</td><td>" << count(s, "rows") << "</td><td>"
           << mb(num(s, "bytes")) << "</td></tr>";
    }
    html << "</table>\n";
  }
  if (auto roofline = NumberField(line, "roofline_gflops")) {
    html << "<h2>GEMM against the roofline</h2><p>" << num(line, "gflops") << " GFLOP/s of a " << *roofline
         << " GFLOP/s roofline: " << num(line, "of_roofline") * 100 << " %</p>\n";
  }
  return html.str();
}

}  // namespace

Result<std::string> RenderReport(const std::string& title, const std::string& metrics_jsonl) {
  std::vector<Attempt> attempts;
  std::vector<std::pair<double, double>> loss, auc;
  std::string oracle, parts;
  std::istringstream lines(metrics_jsonl);
  std::string line;
  uint64_t batches = 0;  // global position of the next batch line
  double bin_loss = 0;
  uint64_t bin_n = 0;
  // Loss points: means over bins of `kBin` batches (a long run stays small).
  const uint64_t total_batches = [&] {
    uint64_t n = 0;
    for (size_t at = metrics_jsonl.find("{\"event\":\"batch\""); at != std::string::npos;
         at = metrics_jsonl.find("{\"event\":\"batch\"", at + 1)) {
      ++n;
    }
    return n;
  }();
  if (total_batches == 0) return Status::InvalidArgument("no batch was recorded");
  const uint64_t bin = std::max<uint64_t>(1, total_batches / 400);
  int line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    if (line.empty()) continue;
    const std::string event = Event(line);
    if (event.empty()) {
      return Status::InvalidArgument("line " + std::to_string(line_number) + " is not a metrics event: " +
                                     line.substr(0, 80));
    }
    if (event == "attempt" || attempts.empty()) {
      Attempt a;
      a.number = static_cast<int>(attempts.size()) + 1;
      if (event == "attempt") {
        a.first_batch = static_cast<uint64_t>(NumberField(line, "first_batch").value_or(0));
        const size_t s = line.find("\"started\":\"");
        if (s != std::string::npos) a.started = line.substr(s + 11, line.find('"', s + 11) - s - 11);
        batches = a.first_batch;
      }
      attempts.push_back(a);
      if (event == "attempt") continue;
    }
    Attempt& a = attempts.back();
    if (event == "batch") {
      ++a.batches;
      ++batches;
      bin_loss += NumberField(line, "loss").value_or(NAN);
      if (++bin_n == bin) {
        if (std::isfinite(bin_loss)) loss.emplace_back(static_cast<double>(batches), bin_loss / static_cast<double>(bin_n));
        bin_loss = 0;
        bin_n = 0;
      }
    } else if (event == "eval") {
      if (auto v = NumberField(line, "auc")) auc.emplace_back(NumberField(line, "batches").value_or(0), *v);
    } else if (event == "summary") {
      a.summary = line;
    } else if (event == "oracle") {
      oracle = line;
    } else if (event == "inspector") {
      parts = line;
    }
  }
  std::ostringstream html;
  html.precision(6);
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>actorrec report: " << Escape(title)
       << "</title><style>body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#1d2330}"
          "table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #dde;text-align:left}"
          "h2{font-size:16px;margin-top:24px}svg{background:#fafbfc;border:1px solid #dde}</style></head><body>\n"
       << "<h1>actorrec report: " << Escape(title) << "</h1>\n";
  html << "<h2>Attempts</h2><table><tr><th>#</th><th>started</th><th>first batch</th><th>batches</th>"
          "<th>samples/s</th><th>parameter digest</th></tr>";
  for (const Attempt& a : attempts) {
    html << "<tr><td>" << a.number << "</td><td>" << Escape(a.started) << "</td><td>" << a.first_batch << "</td><td>"
         << a.batches << "</td><td>";
    if (auto r = NumberField(a.summary, "samples_per_s")) html << std::llround(*r);
    html << "</td><td>";
    const size_t d = a.summary.find("\"parameter_digest\":\"");
    if (d != std::string::npos) html << Escape(a.summary.substr(d + 20, 16));
    html << "</td></tr>";
  }
  html << "</table>\n<h2>Training loss (mean per " << bin << " batch" << (bin > 1 ? "es" : "") << ")</h2>"
       << LineSvg(loss, "#c44", "loss") << "\n<h2>Eval AUC</h2>" << LineSvg(auc, "#36c", "auc") << "\n";
  for (const Attempt& a : attempts) {
    if (a.summary.empty()) continue;
    html << "<h2>Per-batch phases of attempt " << a.number << " (ms, slowest trainer)</h2>" << BreakdownSvg(a.summary)
         << "\n";
  }
  if (!parts.empty()) html << PartsHtml(parts);
  if (!oracle.empty()) html << "<h2>Oracle</h2><pre>" << Escape(oracle) << "</pre>\n";
  html << "</body></html>\n";
  return html.str();
}

Result<std::string> WriteReport(const std::string& run_dir, const std::string& out) {
  const std::string path = run_dir + "/metrics.jsonl";
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read " + path + ": is " + run_dir + " a run directory?");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto html = RenderReport(std::filesystem::path(run_dir).lexically_normal().filename().string(), text);
  if (!html.ok()) return Status::InvalidArgument(path + ": " + html.status().message());
  const std::string target = out.empty() ? run_dir + "/report.html" : out;
  if (Status s = WriteFileAtomically(target, *html); !s.ok()) return s;
  return target;
}

}  // namespace actorrec::inspector
