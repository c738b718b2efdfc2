// calibrate.hpp — choosing the iteration count of a sample.
//
// Grows the count until one timed run lasts at least the target, so a
// sample is far above the clock's resolution and read cost. Takes the timed
// run as a function so tests can drive it with a fake clock.
#pragma once

#include <cstdint>
#include <functional>

namespace kbench {

// timed(iters) runs the operation iters times and returns nanoseconds.
// Returns the first count whose run lasted >= target_ns twice in a row (the
// shorter of the two decides; or max_iters).
std::uint64_t calibrate(const std::function<std::uint64_t(std::uint64_t)>& timed,
                        std::uint64_t target_ns, std::uint64_t max_iters = 1ull << 40);

}  // namespace kbench
