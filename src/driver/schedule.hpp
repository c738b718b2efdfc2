// schedule.hpp — the order of the cases in each rep.
//
// Every rep runs every case once, in its own shuffled order, so that a slow
// drift of the machine (thermal, a background job) does not line up with one
// benchmark. The shuffle is our own Fisher-Yates over std::mt19937_64 (whose
// output the standard fixes) rather than std::shuffle (whose algorithm it
// does not), so a recorded seed gives the same order with any library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kbench::driver {

// A permutation of 0..n-1 for rep `rep` of a run with `seed`.
std::vector<std::size_t> rep_order(std::size_t n, std::uint64_t seed, int rep);

}  // namespace kbench::driver

namespace kbench::driver {

struct Options;

// A rough guess of one invocation's duration in seconds, from the sample
// settings and the harness's defaults (10 samples of at least 2 ms after a
// 5 ms warm-up) plus process start, calibration and partner set-up. Slow
// operations (exec, large copies) take longer; --list says it is rough.
double estimate_invocation_s(const Options& o);

}  // namespace kbench::driver
