// counters.cpp — perf_event_open groups, with a one-by-one fallback.
#include "harness/internal/counters.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness/internal/usage_error.hpp"
#include "harness/sys.hpp"

namespace kbench {

namespace {

struct CounterDef {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
};

constexpr std::uint64_t cache_event(std::uint64_t cache, std::uint64_t op, std::uint64_t result) {
  return cache | (op << 8) | (result << 16);
}

const CounterDef kDefs[] = {
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"cache_references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"l1d_read_misses", PERF_TYPE_HW_CACHE,
     cache_event(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)},
    {"dtlb_misses", PERF_TYPE_HW_CACHE,
     cache_event(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)},
    {"task_clock_ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
};

const CounterDef* find_def(const std::string& name) {
  for (const auto& d : kDefs)
    if (name == d.name) return &d;
  return nullptr;
}

// Tests force a counter to fail to exercise the "missing counter" path on
// machines that have it: KBENCH_FAIL_COUNTERS=cycles,task_clock_ns.
bool forced_failure(const std::string& name) {
  const char* env = std::getenv("KBENCH_FAIL_COUNTERS");
  if (!env) return false;
  const std::string list = std::string(",") + env + ",";
  return list.find("," + name + ",") != std::string::npos;
}

int perf_open(const CounterDef& d, int group_fd, bool exclude_kernel, bool group_format) {
  if (forced_failure(d.name)) {
    errno = ENOENT;
    return -1;
  }
  // A kernel without perf events (CONFIG_PERF_EVENTS=n), and one that
  // refuses kernel-mode counts (perf_event_paranoid >= 2, unprivileged).
  if (simulated_missing("perf_events")) {
    errno = ENOSYS;
    return -1;
  }
  if (!exclude_kernel && simulated_missing("perf_kernel")) {
    errno = EACCES;
    return -1;
  }
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = d.type;
  attr.config = d.config;
  attr.inherit = 1;  // partners and threads started after this are counted
  attr.exclude_kernel = exclude_kernel ? 1 : 0;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                     (group_format ? PERF_FORMAT_GROUP : 0);
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

std::optional<std::int64_t> counter_delta(const CounterReading& start, const CounterReading& end) {
  if (end.value < start.value || end.enabled < start.enabled || end.running < start.running) return std::nullopt;
  const std::uint64_t dv = end.value - start.value;
  const std::uint64_t de = end.enabled - start.enabled;
  const std::uint64_t dr = end.running - start.running;
  if (dr == 0) return std::nullopt;
  unsigned __int128 n = dv;
  if (dr < de) n = (n * de + dr / 2) / dr;
  constexpr auto kMax = static_cast<unsigned __int128>(INT64_MAX);
  if (n > kMax) return std::nullopt;
  return static_cast<std::int64_t>(n);
}

const std::vector<std::string>& counter_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& d : kDefs) v.push_back(d.name);
    return v;
  }();
  return names;
}

std::vector<std::string> parse_counter_list(const std::string& list) {
  if (list.empty() || list == "all") return counter_names();
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!find_def(name)) {
      std::string known;
      for (const auto& n : counter_names()) known += (known.empty() ? "" : ", ") + n;
      throw UsageError{"--counters: unknown counter '" + name + "' (known: " + known + ")"};
    }
    bool dup = false;
    for (const auto& n : out) dup = dup || n == name;
    if (!dup) out.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Counters::~Counters() { close_all(); }

void Counters::close_all() {
  for (auto& s : slots_) {
    if (s.fd >= 0) ::close(s.fd);
    s.fd = -1;
  }
}

bool Counters::open_group(bool exclude_kernel) {
  slots_.clear();
  int leader = -1;
  for (const auto& n : names_) {
    const int fd = perf_open(*find_def(n), leader, exclude_kernel, true);
    if (fd < 0) {
      close_all();
      slots_.clear();
      return false;
    }
    if (leader < 0) leader = fd;
    slots_.push_back({n, fd});
  }
  return true;
}

void Counters::open_single(bool exclude_kernel) {
  slots_.clear();
  for (const auto& n : names_) {
    const int fd = perf_open(*find_def(n), -1, exclude_kernel, false);
    if (fd < 0) {
      std::fprintf(stderr, "%s: counter %s not available: %s (null in the samples)\n", program_name(), n.c_str(),
                   std::strerror(errno));
    }
    slots_.push_back({n, fd});
  }
}

void Counters::open(const std::vector<std::string>& names) {
  names_ = names;
  if (names_.empty()) return;
  // User and kernel if allowed (perf_event_paranoid <= 1 or privileged);
  // otherwise user only. Probed with a software counter, which every
  // kernel with perf events has (named apart, so that KBENCH_FAIL_COUNTERS
  // of one counter does not fail the probe).
  const CounterDef probe{"(probe)", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK};
  bool exclude_kernel = false;
  int fd = perf_open(probe, -1, false, false);
  if (fd < 0 && (errno == EACCES || errno == EPERM)) {
    exclude_kernel = true;
    fd = perf_open(probe, -1, true, false);
  }
  if (fd < 0) {
    // No perf events here at all: a kernel built without them (ENOSYS), or
    // one that refuses every count (perf_event_paranoid 3 on Debian and
    // Android, unprivileged: EACCES). The run is as valid as without
    // --counters; every counter is null, said once.
    std::fprintf(stderr, "%s: counters not available: perf_event_open: %s (every counter null)\n", program_name(),
                 std::strerror(errno));
    scope_ = "none";
    for (const auto& n : names_) slots_.push_back({n, -1});
    mode_ = "none";
    return;
  }
  ::close(fd);
  scope_ = exclude_kernel ? "user" : "user+kernel";
  if (open_group(exclude_kernel)) {
    mode_ = "group";
    return;
  }
  open_single(exclude_kernel);
  bool any = false;
  for (const auto& s : slots_) any = any || s.fd >= 0;
  mode_ = any ? "single" : "none";
}

std::vector<std::optional<CounterReading>> Counters::read() const {
  std::vector<std::optional<CounterReading>> out(slots_.size());
  if (slots_.empty()) return out;
  if (mode_ == "group") {
    // {nr, time_enabled, time_running, value[nr]}
    std::vector<std::uint64_t> buf(3 + slots_.size());
    const ssize_t n = ::read(slots_[0].fd, buf.data(), buf.size() * sizeof(std::uint64_t));
    if (n < 0) die_errno("read perf counters", errno);
    if (static_cast<std::size_t>(n) < buf.size() * sizeof(std::uint64_t) || buf[0] != slots_.size())
      die("read perf counters: short read");
    for (std::size_t i = 0; i < slots_.size(); ++i) out[i] = CounterReading{buf[3 + i], buf[1], buf[2]};
    return out;
  }
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].fd < 0) continue;
    std::uint64_t v[3];
    const ssize_t n = ::read(slots_[i].fd, v, sizeof v);
    if (n < 0) die_errno("read perf counter", errno);
    if (n != static_cast<ssize_t>(sizeof v)) die("read perf counter: short read");
    out[i] = CounterReading{v[0], v[1], v[2]};
  }
  return out;
}

}  // namespace kbench
