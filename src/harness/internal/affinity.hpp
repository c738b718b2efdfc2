// affinity.hpp — which CPUs this process may use, and pinning to one.
#pragma once

#include <vector>

namespace kbench {

// The CPUs the process was allowed to run on when it started, ascending.
// (Remembered before any pinning, so partners can be "unpinned" again.)
const std::vector<int>& allowed_cpus();
bool cpu_allowed(int cpu);
// Restores the calling process/thread to every CPU in allowed_cpus().
void unpin();

}  // namespace kbench
