// Process-wide logging: one spdlog logger named after the process's member.
//
// Lines look like `2026-11-22 08:00:01.123 [a] info: member 'b' joined`, so the
// log of a multi-process run says which process wrote each line.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace actorrec {

// Sets the default logger to stderr, tagged with `process_name`, at `level`
// ("trace", "debug", "info", "warn", "error", "off"). Unknown levels are an
// invalid argument, reported by the caller. Safe to call more than once.
bool InitLogging(const std::string& process_name, const std::string& level);

}  // namespace actorrec
