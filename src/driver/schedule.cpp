// schedule.cpp — seeded per-rep shuffle (see schedule.hpp).
#include "driver/schedule.hpp"

#include <numeric>
#include <random>

namespace kbench::driver {

std::vector<std::size_t> rep_order(std::size_t n, std::uint64_t seed, int rep) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Each rep its own stream: the golden-ratio step keeps seeds s and s+1
  // from giving related sequences.
  std::mt19937_64 gen(seed + 0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(rep) + 1));
  for (std::size_t i = n; i > 1; --i) {
    // Uniform in [0, i) by rejection, not a biased modulo.
    const std::uint64_t bound = i;
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % bound);
    std::uint64_t x;
    do {
      x = gen();
    } while (x >= limit);
    std::swap(order[i - 1], order[static_cast<std::size_t>(x % bound)]);
  }
  return order;
}

}  // namespace kbench::driver

#include "driver/options.hpp"

namespace kbench::driver {

double estimate_invocation_s(const Options& o) {
  // Mirrors the harness defaults (src/harness/internal/options.hpp); only a guess.
  const double samples = o.samples ? *o.samples : (o.quick ? 3 : 10);
  const double min_sample_ms = o.quick ? 1 : 2;
  const double warmup_ms = o.quick ? 1 : 5;
  const double overhead_s = 0.04;  // fork+exec, calibration, partners, teardown
  // Calibration stops at the first count above the minimum, so a sample
  // lasts between one and two minimums: take 1.5.
  return overhead_s + (warmup_ms + (samples + 2) * min_sample_ms * 1.5) / 1000.0;
}

}  // namespace kbench::driver
