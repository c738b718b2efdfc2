// usage_error.hpp — the one convention of kbench's two command lines.
//
// The benchmark binaries' parser (options.hpp) and kbench-run's
// (src/driver/options.hpp) are pure functions that throw UsageError with a
// message naming the mistake; each main catches it in one place, prints
// "PROG: MESSAGE" and the usage text on stderr and exits 2 (kExitUsage).
// Not a std::exception on purpose: a handler for runtime failures (exit 1)
// must never swallow a usage error.
#pragma once

#include <string>

namespace kbench {

struct UsageError {
  std::string message;
};

}  // namespace kbench
