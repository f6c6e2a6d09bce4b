#include "tools/inspect_command.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "actors/common/exit_codes.hpp"
#include "actors/inspector/run_report.hpp"
#include "http/client.hpp"

namespace actorrec {
namespace {

struct InspectFlags {
  std::string address;
  std::string token;
  bool once = false;
  bool json = false;
  uint32_t interval_ms = 1000;
};

int RunInspect(const InspectFlags& f) {
  std::string host;
  uint16_t port = 0;
  if (Status s = http::SplitHostPort(f.address, &host, &port); !s.ok()) {
    std::cerr << "actorrec inspect: " << s.message() << "\n";
    return kExitUsage;
  }
  const std::string query = f.token.empty() ? "" : "?token=" + f.token;
  auto fetch = [&](const char* path) -> Result<std::string> {
    auto r = http::Get(host, port, path + query);
    if (!r.ok()) return r.status();
    if (r->status != 200) {
      return Status::Unavailable("the inspector at " + f.address + " answered " + std::to_string(r->status) + ": " +
                                 r->body);
    }
    return r->body;
  };
  if (f.once) {
    auto body = fetch(f.json ? "/api/snapshot" : "/api/text");
    if (!body.ok()) {
      std::cerr << "actorrec inspect: " << body.status().message() << "\n";
      return kExitFailure;
    }
    std::cout << *body << (f.json ? "\n" : "");
    return kExitOk;
  }
  // Redraw in place while the run lives; once it has ended (or gone after
  // we saw it), the last view stays on screen.
  const bool tty = isatty(STDOUT_FILENO) != 0;
  bool seen = false;
  while (true) {
    auto body = fetch("/api/text");
    if (!body.ok()) {
      if (seen) {
        std::cout << "(the run's inspector is gone: " << body.status().message() << ")\n";
        return kExitOk;
      }
      std::cerr << "actorrec inspect: " << body.status().message() << "\n";
      return kExitFailure;
    }
    seen = true;
    std::cout << (tty ? "\033[H\033[J" : "") << *body << std::flush;
    if (body->find("state: finished") != std::string::npos || body->find("state: failed") != std::string::npos ||
        body->find("state: stopped") != std::string::npos) {
      return kExitOk;
    }
    if (!tty) std::cout << "\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(f.interval_ms));
  }
}

}  // namespace

std::function<int()> AddInspectCommand(CLI::App& app) {
  auto f = std::make_shared<InspectFlags>();
  auto* inspect = app.add_subcommand(
      "inspect",
      "Show a running train's inspector in the terminal (the address `train` printed as 'inspector:'), "
      "redrawn every second until the run ends.");
  inspect->add_option("address", f->address, "HOST:PORT of the inspector")->required();
  inspect->add_option("--token", f->token, "the token an inspector on a non-local address asks for");
  inspect->add_flag("--once", f->once, "print one snapshot and exit");
  inspect->add_flag("--json", f->json, "with --once: the snapshot as JSON (the page's /api/snapshot)");
  inspect->add_option("--interval-ms", f->interval_ms, "refresh period (default 1000)")->check(CLI::Range(100, 60000));
  return [f] { return RunInspect(*f); };
}

std::function<int()> AddReportCommand(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto* report = app.add_subcommand(
      "report", "Write a run directory's report: one self-contained HTML page with its loss and AUC curves and the "
                "per-batch breakdown of every attempt (from its metrics.jsonl).");
  report->add_option("run_dir", *dir, "the run directory (run.output_dir, e.g. runs/local)")->required();
  report->add_option("--out,-o", *out, "where to write it (default RUN_DIR/report.html)");
  return [dir, out] {
    auto written = inspector::WriteReport(*dir, *out);
    if (!written.ok()) {
      std::cerr << "actorrec report: " << written.status().message() << "\n";
      return written.status().code() == Status::Code::kIoError ? kExitFailure : kExitUsage;
    }
    std::cout << "report: " << *written << "\n";
    return kExitOk;
  };
}

}  // namespace actorrec
