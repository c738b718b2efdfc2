// rusage.cpp — getrusage plus the partners' counts from /proc.
#include "harness/internal/rusage.hpp"

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

void add_proc(Usage& u, pid_t pid) {
  static const long ticks = sysconf(_SC_CLK_TCK);
  char path[64], buf[4096];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  if (read_small(path, buf, sizeof buf)) {
    // Fields after the command name, which may contain spaces: skip to ')'.
    const char* p = std::strrchr(buf, ')');
    unsigned long long minflt = 0, majflt = 0, ut = 0, st = 0;
    if (p && std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu %*u %llu %llu", &minflt,
                         &majflt, &ut, &st) == 4) {
      u.minflt += static_cast<std::int64_t>(minflt);
      u.majflt += static_cast<std::int64_t>(majflt);
      u.utime_ns += static_cast<std::int64_t>(ut * 1000000000ull / static_cast<unsigned long long>(ticks));
      u.stime_ns += static_cast<std::int64_t>(st * 1000000000ull / static_cast<unsigned long long>(ticks));
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

Usage usage_snapshot(const std::vector<pid_t>& partners) {
  Usage u;
  add_rusage(u, RUSAGE_SELF);
  add_rusage(u, RUSAGE_CHILDREN);
  for (pid_t pid : partners) add_proc(u, pid);
  return u;
}

}  // namespace kbench
