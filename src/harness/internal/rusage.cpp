// rusage.cpp — getrusage plus the partners' counts from /proc.
#include "harness/internal/rusage.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness/sys.hpp"

namespace kbench {

namespace {

std::int64_t tv_ns(const timeval& tv) {
  return static_cast<std::int64_t>(tv.tv_sec) * 1000000000 + static_cast<std::int64_t>(tv.tv_usec) * 1000;
}

void add_rusage(Usage& u, int who) {
  rusage r;
  check(getrusage(who, &r), "getrusage");
  u.utime_ns += tv_ns(r.ru_utime);
  u.stime_ns += tv_ns(r.ru_stime);
  u.nvcsw += r.ru_nvcsw;
  u.nivcsw += r.ru_nivcsw;
  u.minflt += r.ru_minflt;
  u.majflt += r.ru_majflt;
}

// Reads a small /proc file into buf; false if the process is gone.
bool read_small(const char* path, char* buf, std::size_t cap) {
  const int fd = simulated_missing("procfs") ? -1 : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, buf, cap - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

void add_proc(Usage& u, pid_t pid, bool& cpu_ok) {
  char path[64], buf[4096];
  std::snprintf(path, sizeof path, "/proc/%d/schedstat", static_cast<int>(pid));
  const auto runtime = read_small(path, buf, sizeof buf) ? parse_schedstat_runtime(buf) : std::nullopt;
  if (runtime && cpu_ok)
    u.partner_cpu_ns = u.partner_cpu_ns.value_or(0) + static_cast<std::int64_t>(*runtime);
  else
    cpu_ok = false;
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  if (read_small(path, buf, sizeof buf)) {
    // Fields after the command name, which may contain spaces: skip to ')'.
    const char* p = std::strrchr(buf, ')');
    unsigned long long minflt = 0, majflt = 0;
    if (p && std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &minflt, &majflt) == 2) {
      u.minflt += static_cast<std::int64_t>(minflt);
      u.majflt += static_cast<std::int64_t>(majflt);
    }
  }
  std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
  if (read_small(path, buf, sizeof buf)) {
    long long v = 0;
    if (const char* q = std::strstr(buf, "\nvoluntary_ctxt_switches:"); q && std::sscanf(q, "\nvoluntary_ctxt_switches: %lld", &v) == 1)
      u.nvcsw += v;
    if (const char* q = std::strstr(buf, "\nnonvoluntary_ctxt_switches:"); q && std::sscanf(q, "\nnonvoluntary_ctxt_switches: %lld", &v) == 1)
      u.nivcsw += v;
  }
}

}  // namespace

std::optional<std::uint64_t> parse_schedstat_runtime(std::string_view text) {
  std::uint64_t v = 0;
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (v > (UINT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(text[i] - '0');
    ++i;
  }
  if (i == 0 || (i < text.size() && text[i] != ' ' && text[i] != '\n')) return std::nullopt;
  return v;
}

Usage usage_snapshot(const std::vector<pid_t>& partners) {
  Usage u;
  add_rusage(u, RUSAGE_SELF);
  add_rusage(u, RUSAGE_CHILDREN);
  bool cpu_ok = true;
  for (pid_t pid : partners) add_proc(u, pid, cpu_ok);
  if (!cpu_ok) u.partner_cpu_ns.reset();
  return u;
}

}  // namespace kbench
