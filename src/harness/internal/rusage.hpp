// rusage.hpp — resource-usage snapshots taken around each sample.
//
// A snapshot sums getrusage(RUSAGE_SELF) (all threads), getrusage(
// RUSAGE_CHILDREN) (children already reaped, e.g. lat_proc's) and the live
// partners' counts from /proc/<pid>/stat and /proc/<pid>/status, so that a
// pipe round trip shows the context switches of both sides. Partner CPU
// times come in clock ticks, so they are coarse.
#pragma once

#include <cstdint>
#include <vector>
#include <sys/types.h>

namespace kbench {

struct Usage {
  std::int64_t utime_ns = 0, stime_ns = 0;
  std::int64_t nvcsw = 0, nivcsw = 0, minflt = 0, majflt = 0;

  Usage operator-(const Usage& o) const {
    return {utime_ns - o.utime_ns, stime_ns - o.stime_ns, nvcsw - o.nvcsw,
            nivcsw - o.nivcsw,     minflt - o.minflt,     majflt - o.majflt};
  }
};

Usage usage_snapshot(const std::vector<pid_t>& partners);

// Delta of two snapshots, per pid set: partners that appeared or vanished
// between the two are left out by the caller passing the same set.
}  // namespace kbench
