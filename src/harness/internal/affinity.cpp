// affinity.cpp — CPU masks and pinning.
#include "harness/internal/affinity.hpp"

#include <algorithm>
#include <sched.h>
#include <string>

#include "harness/bench.hpp"

namespace kbench {

namespace {

cpu_set_t& original_mask() {
  static cpu_set_t mask = [] {
    cpu_set_t m;
    CPU_ZERO(&m);
    check(sched_getaffinity(0, sizeof m, &m), "sched_getaffinity");
    return m;
  }();
  return mask;
}

}  // namespace

const std::vector<int>& allowed_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> v;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &original_mask())) v.push_back(c);
    return v;
  }();
  return cpus;
}

bool cpu_allowed(int cpu) {
  const auto& v = allowed_cpus();
  return std::find(v.begin(), v.end(), cpu) != v.end();
}

void pin_to_cpu(int cpu) {
  if (!cpu_allowed(cpu)) {
    std::string have;
    for (int c : allowed_cpus()) have += (have.empty() ? "" : ",") + std::to_string(c);
    skip("CPU " + std::to_string(cpu) + " is not available here (online and allowed: " + have + ")");
  }
  cpu_set_t m;
  CPU_ZERO(&m);
  CPU_SET(cpu, &m);
  // EINVAL: the CPU went offline (hotplug) since this process started.
  const int rc = simulated_missing("cpu_hotplug") ? (errno = EINVAL, -1) : sched_setaffinity(0, sizeof m, &m);
  if (rc != 0 && errno == EINVAL) skip("CPU " + std::to_string(cpu) + " went offline (sched_setaffinity: EINVAL)");
  check(rc, "sched_setaffinity");
}

void unpin() { check(sched_setaffinity(0, sizeof(cpu_set_t), &original_mask()), "sched_setaffinity"); }

}  // namespace kbench
