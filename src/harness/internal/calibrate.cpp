// calibrate.cpp — iteration-count calibration.
#include "harness/internal/calibrate.hpp"

#include <algorithm>

namespace kbench {

std::uint64_t calibrate(const std::function<std::uint64_t(std::uint64_t)>& timed,
                        std::uint64_t target_ns, std::uint64_t max_iters) {
  std::uint64_t n = 1;
  for (;;) {
    std::uint64_t t = timed(n);
    if (t >= target_ns) {
      // One run interrupted by the rest of the machine (a preemption, a
      // busy sibling CPU) could stop the calibration at a count far too
      // small; a second run must agree before the count is accepted.
      t = std::min(t, timed(n));
      if (t >= target_ns) return n;
    }
    if (n >= max_iters) return n;
    std::uint64_t next;
    if (t == 0 || t < target_ns / 100) {
      // Far below the target, the time is dominated by noise and first-touch
      // costs: grow geometrically rather than trust the ratio.
      next = n * 10;
    } else {
      // Aim 10% above the target so noise does not leave us just short.
      const double scale = 1.1 * static_cast<double>(target_ns) / static_cast<double>(t);
      next = static_cast<std::uint64_t>(static_cast<double>(n) * scale) + 1;
      next = std::min(next, n * 10);
    }
    n = std::min(std::max(next, n + 1), max_iters);
  }
}

}  // namespace kbench
