// human.cpp — see human.hpp.
#include "harness/internal/human.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "harness/internal/median.hpp"

namespace kbench {

namespace {

struct Scaled {
  double value;
  int step;  // how many times divided by 1000
};

// Divide by 1000 while the value would print as 1000 or more, up to
// max_step times.
Scaled scale(double v, int max_step) {
  int step = 0;
  while (step < max_step && std::fabs(v) >= 999.5) {
    v /= 1000;
    ++step;
  }
  return {v, step};
}

}  // namespace

std::string three_digits(double v) {
  char b[48];
  const double a = std::fabs(v);
  const char* fmt = a >= 99.95 ? "%.0f" : a >= 9.995 ? "%.1f" : a >= 0.9995 ? "%.2f" : "%.3g";
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string human_time_ns(double ns) {
  static const char* const units[] = {"ns", "µs", "ms", "s"};
  const Scaled s = scale(ns, 3);
  return three_digits(s.value) + " " + units[s.step];
}

std::string human_bandwidth(double bytes_per_s, bool define) {
  static const char* const units[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  const Scaled s = scale(bytes_per_s, 4);
  std::string out = three_digits(s.value) + " " + units[s.step];
  if (define && s.step > 0) out += " (10^" + std::to_string(3 * s.step) + " B/s)";
  return out;
}

std::string human_rate(double per_s) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T"};
  const Scaled s = scale(per_s, 4);
  return three_digits(s.value) + prefixes[s.step] + " ops/s";
}

std::string summary_line(const std::string& case_id, const std::vector<double>& ns_per_op, std::uint64_t iters,
                         std::optional<std::uint64_t> bytes_per_op) {
  const double med = median_of(ns_per_op);
  const double lo = ns_per_op.empty() ? 0 : *std::min_element(ns_per_op.begin(), ns_per_op.end());
  const double hi = ns_per_op.empty() ? 0 : *std::max_element(ns_per_op.begin(), ns_per_op.end());
  char tail[128];
  std::snprintf(tail, sizeof tail, ", spread %.1f%% of median, %zu samples x %" PRIu64 " iters",
                med > 0 ? 100.0 * (hi - lo) / med : 0.0, ns_per_op.size(), iters);
  if (bytes_per_op) {
    // bytes per ns = 10^9 bytes per second; the fastest sample is the max
    const double b = static_cast<double>(*bytes_per_op) * 1e9;
    return case_id + ": median " + human_bandwidth(med > 0 ? b / med : 0, true) + ", max " +
           human_bandwidth(lo > 0 ? b / lo : 0) + tail;
  }
  return case_id + ": median " + human_time_ns(med) + " per op, min " + human_time_ns(lo) + tail;
}

std::string aggregate_summary_line(const std::string& case_id, int copies, const std::vector<double>& aggregate,
                                   const std::vector<double>& per_copy_ns) {
  return case_id + ": " + std::to_string(copies) + " copies: aggregate median " + human_rate(median_of(aggregate)) +
         ", per copy median " + human_time_ns(median_of(per_copy_ns)) + " per op";
}

}  // namespace kbench
