// rusage.hpp — resource-usage snapshots taken around each sample.
//
// A snapshot sums getrusage(RUSAGE_SELF) (all threads), getrusage(
// RUSAGE_CHILDREN) (children already reaped, e.g. lat_proc's) and the live
// partners' counts from /proc/<pid>/stat and /proc/<pid>/status, so that a
// pipe round trip shows the context switches and faults of both sides.
//
// The live partners' CPU time is kept apart, in ns, from the first field of
// /proc/<pid>/schedstat (the scheduler's sum_exec_runtime). /proc/<pid>/stat
// gives it only in clock ticks (10 ms): a 2 ms sample saw 0 or a whole tick.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>
#include <sys/types.h>

namespace kbench {

struct Usage {
  std::int64_t utime_ns = 0, stime_ns = 0;  // self and reaped children
  std::int64_t nvcsw = 0, nivcsw = 0, minflt = 0, majflt = 0;  // and live partners
  // CPU time of the live partner processes; nullopt without one, or when a
  // partner's schedstat could not be read.
  std::optional<std::int64_t> partner_cpu_ns;

  Usage operator-(const Usage& o) const {
    std::optional<std::int64_t> partner;
    if (partner_cpu_ns && o.partner_cpu_ns) partner = *partner_cpu_ns - *o.partner_cpu_ns;
    return {utime_ns - o.utime_ns, stime_ns - o.stime_ns, nvcsw - o.nvcsw, nivcsw - o.nivcsw,
            minflt - o.minflt,     majflt - o.majflt,     partner};
  }
};

// The CPU time (ns) in the text of /proc/<pid>/schedstat: its first field.
std::optional<std::uint64_t> parse_schedstat_runtime(std::string_view text);

Usage usage_snapshot(const std::vector<pid_t>& partners);

// Delta of two snapshots, per pid set: partners that appeared or vanished
// between the two are left out by the caller passing the same set.
}  // namespace kbench
