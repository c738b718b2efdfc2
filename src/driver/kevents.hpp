// kevents.hpp — kernel event counts around one invocation, per operation.
//
// Beside each profile (and without perf) the driver reads system-wide
// counters before and after the profiled invocation: /proc/vmstat (page
// allocations and frees, faults, reclaim, THP, slab pages), /proc/softirqs
// and /proc/interrupts (summed over CPUs), and the active objects of every
// slab cache in /proc/slabinfo when it is readable (root). Their changes,
// divided by the operations the invocation timed, say what one operation
// made the kernel do. They are system-wide: what else ran in that time,
// the process's start and setup, and perf's own sampling count too; a long
// invocation dilutes the fixed part.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "driver/json_value.hpp"

namespace kbench::driver {

struct KernelCounters {
  std::map<std::string, std::int64_t> vmstat, softirqs, interrupts, slab;
  bool slab_readable = false;
};

KernelCounters read_kernel_counters();

// The "events" object of profiles.jsonl: the changes from `before` to
// `after` divided by `ops` (only the counters that changed; the slab caches
// whose active objects changed most), with `ops` and `seconds`.
JsonValue kernel_events_per_op(const KernelCounters& before, const KernelCounters& after, double ops,
                               double seconds);

}  // namespace kbench::driver
