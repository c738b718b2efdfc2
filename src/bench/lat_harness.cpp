// lat_harness — what the harness itself adds to a measurement.
//
// One op    = empty: one turn of the timing loop with a compiler barrier
//             (nothing else); clock: one clock_gettime(CLOCK_MONOTONIC).
// Timed     = run() only, like every benchmark.
// Placement = unpinned unless --cpu.
// Caveats   = `empty` is well under a nanosecond: it shows the loop adds
//             nothing measurable to any kernel operation. `clock` is a vDSO
//             call (no kernel entry) on most clock sources; on a VM whose
//             clock source is not the TSC it may trap and cost far more.
#include <ctime>

#include "harness/bench.hpp"

namespace {

void empty_loop(std::uint64_t iters) {
  for (std::uint64_t i = 0; i < iters; ++i) kbench::clobber_memory();
}

void clock_loop(std::uint64_t iters) {
  timespec ts;
  while (iters--) {
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    kbench::do_not_optimize(ts);
  }
}

}  // namespace

KBENCH_MAIN("lat_harness", {kbench::loop("empty", empty_loop), kbench::loop("clock", clock_loop)})
