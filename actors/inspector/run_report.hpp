// The report of a finished run: its run directory's metrics.jsonl (every
// attempt, appended) rendered as one self-contained HTML page with inline
// SVG curves (loss, eval AUC) and the per-batch phase breakdown of each
// attempt. `actorrec report RUN_DIR` writes it.
#pragma once

#include <string>

#include "base/status.hpp"

namespace actorrec::inspector {

// The HTML of the report of the metrics in `metrics_jsonl` (the file's
// text), titled `title`. InvalidArgument when it holds no batch at all,
// naming the first line that is not a JSON object.
Result<std::string> RenderReport(const std::string& title, const std::string& metrics_jsonl);

// Reads RUN_DIR/metrics.jsonl and writes RUN_DIR/report.html (or `out`
// when given); the path written. NotFound naming the file when it is absent.
Result<std::string> WriteReport(const std::string& run_dir, const std::string& out);

}  // namespace actorrec::inspector
