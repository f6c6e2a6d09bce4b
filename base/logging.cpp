// stderr logging through spdlog.
#include "base/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <memory>

namespace actorrec {

bool InitLogging(const std::string& process_name, const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  // from_str maps anything unknown to "off"; only "off" itself may mean off.
  if (lvl == spdlog::level::off && level != "off") return false;
  // Not registered in spdlog's registry, so a second call simply replaces it.
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(spdlog::color_mode::automatic);
  auto logger = std::make_shared<spdlog::logger>(process_name, sink);
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e [" + process_name + "] %l: %v");
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return true;
}

}  // namespace actorrec
