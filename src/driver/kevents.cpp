// kevents.cpp — /proc counters around an invocation (see kevents.hpp).
#include "driver/kevents.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace kbench::driver {

namespace {

// The /proc/vmstat counters that tell what the memory manager did: page
// allocation and freeing, faults, reclaim (scans, steals, stalls), THP,
// compaction and migration, and the slab's pages (gauges: their change).
bool vmstat_wanted(const std::string& k) {
  static const char* const prefixes[] = {"pgalloc", "pgfree", "pgfault", "pgmajfault", "pgscan", "pgsteal",
                                         "allocstall", "thp_", "nr_slab_", "compact_", "pgmigrate",
                                         "pgrefill", "pgactivate", "pgdeactivate", "workingset_"};
  for (const char* p : prefixes)
    if (k.rfind(p, 0) == 0) return true;
  return false;
}

void read_vmstat(KernelCounters& c) {
  std::ifstream in("/proc/vmstat");
  std::string k;
  long long v;
  while (in >> k >> v)
    if (vmstat_wanted(k)) c.vmstat[k] = v;
}

// /proc/softirqs and /proc/interrupts: a header of CPU names, then
// "NAME: n n n [description]". Numbered interrupts (devices) are summed
// into "devices"; the named ones (LOC, RES, CAL, TLB, ...) kept apart.
void read_per_cpu_table(const char* path, std::map<std::string, std::int64_t>& out, bool group_numbered) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return;
  std::size_t ncpu = 0;
  {
    std::istringstream h(line);
    std::string w;
    while (h >> w) ncpu += w.rfind("CPU", 0) == 0;
  }
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string name;
    if (!(s >> name) || name.empty() || name.back() != ':') continue;
    name.pop_back();
    std::int64_t sum = 0;
    std::string w;
    for (std::size_t i = 0; i < ncpu && s >> w; ++i) {
      char* end = nullptr;
      const long long n = std::strtoll(w.c_str(), &end, 10);
      if (*end != '\0') break;
      sum += n;
    }
    const bool numbered = !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
    out[group_numbered && numbered ? "devices" : name] += sum;
  }
}

void read_slabinfo(KernelCounters& c) {
  std::ifstream in("/proc/slabinfo");
  std::string line;
  if (!in || !std::getline(in, line) || line.rfind("slabinfo", 0) != 0) return;
  c.slab_readable = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string name;
    long long active;
    if (s >> name >> active) c.slab[name] = active;
  }
}

double per_op(std::int64_t delta, double ops) { return ops > 0 ? double(delta) / ops : 0.0; }

// A per-op figure to 4 significant digits: enough to compare, short to read.
JsonValue figure(double x) {
  if (x == 0) return JsonValue::real(0);
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(std::fabs(x))));
  return JsonValue::real(std::round(x * scale) / scale);
}

JsonValue deltas(const std::map<std::string, std::int64_t>& a, const std::map<std::string, std::int64_t>& b,
                 double ops) {
  JsonValue o = JsonValue::object();
  for (const auto& [k, after] : b) {
    const auto it = a.find(k);
    const std::int64_t d = after - (it == a.end() ? 0 : it->second);
    if (d != 0) o.set(k, figure(per_op(d, ops)));
  }
  return o;
}

}  // namespace

KernelCounters read_kernel_counters() {
  KernelCounters c;
  read_vmstat(c);
  read_per_cpu_table("/proc/softirqs", c.softirqs, false);
  read_per_cpu_table("/proc/interrupts", c.interrupts, true);
  read_slabinfo(c);
  return c;
}

JsonValue kernel_events_per_op(const KernelCounters& before, const KernelCounters& after, double ops,
                               double seconds) {
  JsonValue j = JsonValue::object();
  j.set("ops", JsonValue::real(ops));
  j.set("seconds", JsonValue::real(std::round(seconds * 1000) / 1000));
  j.set("vmstat", deltas(before.vmstat, after.vmstat, ops));
  j.set("softirqs", deltas(before.softirqs, after.softirqs, ops));
  std::int64_t irq_before = 0, irq_after = 0;
  for (const auto& kv : before.interrupts) irq_before += kv.second;
  for (const auto& kv : after.interrupts) irq_after += kv.second;
  JsonValue irq = deltas(before.interrupts, after.interrupts, ops);
  irq.set("total", figure(per_op(irq_after - irq_before, ops)));
  j.set("interrupts", irq);
  if (!before.slab_readable || !after.slab_readable) {
    j.set("slab_active_objs", JsonValue());
  } else {
    // The caches whose active objects changed most: the busiest in this
    // invocation (a net change: objects allocated and freed within it
    // cancel out).
    std::vector<std::pair<std::int64_t, std::string>> moved;
    for (const auto& [k, v] : after.slab) {
      const auto it = before.slab.find(k);
      const std::int64_t d = v - (it == before.slab.end() ? 0 : it->second);
      if (d != 0) moved.emplace_back(d, k);
    }
    std::sort(moved.begin(), moved.end(), [](const auto& x, const auto& y) {
      return std::llabs(x.first) != std::llabs(y.first) ? std::llabs(x.first) > std::llabs(y.first) : x.second < y.second;
    });
    JsonValue slab = JsonValue::object();
    for (std::size_t i = 0; i < moved.size() && i < 8; ++i) slab.set(moved[i].second, figure(per_op(moved[i].first, ops)));
    j.set("slab_active_objs", slab);
  }
  return j;
}

}  // namespace kbench::driver
