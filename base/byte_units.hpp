// Byte counts for people: "12.3 MB", in decimal units, as the training
// summary and the config's memory checks report them.
#pragma once

#include <string>

namespace actorrec {

// "0 B", "512 B", "1.5 kB", "274.9 GB"; TB is the largest unit.
std::string DecimalBytes(double bytes);

}  // namespace actorrec
