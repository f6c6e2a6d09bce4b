// Which build this is: nodes of one cluster compare it when they join.
#pragma once

namespace actorrec {
// `git describe --always --dirty` at build time, or the project version.
const char* BuildVersion();
}  // namespace actorrec
