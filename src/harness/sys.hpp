// sys.hpp — checked system calls and exact I/O for benchmarks and the harness.
//
// Every system call's result is checked, in release builds too; a failure
// ends the binary with exit 1 and "binary: what failed: strerror".
// A benchmark never reports a number for work that failed. The helpers here
// are inline because they sit inside timed loops.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <unistd.h>

namespace kbench {

// Exit codes shared by every binary (reference: formats.md).
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitSkip = 77;

// The binary's name for messages ("lat_pipe"); set by the harness.
const char* program_name();
void set_program_name(const char* name);

// "prog: what: strerror(err)" on stderr, cleanup, exit 1.
[[noreturn]] void die_errno(const char* what, int err);
// "prog: message" on stderr, cleanup, exit 1.
[[noreturn]] void die(const std::string& message);
// A bad parameter value (out of range, not one of the choices): "prog:
// message" on stderr, cleanup, exit 2 like every other usage error.
[[noreturn]] void bad_param(const std::string& message);
// "prog: skipped: reason" on stderr, cleanup, exit 77.
[[noreturn]] void skip(const std::string& reason);

// Optional kernel features. Where a kernel lacks one, a case either runs
// without it, when its measurement stays valid, and says so in every sample
// (a key whose value is "unavailable", e.g. "thp": "unavailable"; the
// driver's end lines and table and scripts/compare name it), or exits 77
// with the reason. Never exit 1 for a kernel that simply lacks an option.
//
// Tests simulate the absence: KBENCH_MISSING=NAME[,NAME...] fails the call
// that would find the feature with the error such a kernel gives, so the
// path runs on every machine (tests/bench/test_bench_optional_features.py,
// tests/driver/test_driver_optional_features.py). Names, and what they fail:
//   thp            madvise(MADV_NOHUGEPAGE): EINVAL (no CONFIG_TRANSPARENT_HUGEPAGE)
//   ipv6           socket(AF_INET6): EAFNOSUPPORT (no ipv6 module, ipv6.disable=1)
//   ipv6_loopback  bind(::1): EADDRNOTAVAIL (disable_ipv6 on lo)
//   loopback       bind of either loopback address: EADDRNOTAVAIL (lo down)
//   epoll          epoll_create1: ENOSYS (CONFIG_EPOLL=n)
//   futex          futex(FUTEX_WAKE): ENOSYS (CONFIG_FUTEX=n)
//   perf_events    perf_event_open: ENOSYS (CONFIG_PERF_EVENTS=n)
//   perf_kernel    perf_event_open counting kernel mode: EACCES (perf_event_paranoid >= 2)
//   procfs, sysfs  every read of /proc, /sys files (not mounted; the driver's meta too)
//   cpu_hotplug    sched_setaffinity: EINVAL (the CPU went offline)
// Read once per process; never consulted inside a timed loop.
bool simulated_missing(const char* feature);

// Returns rc; rc == -1 ends the binary with errno's message.
inline long check(long rc, const char* what) {
  if (rc == -1) die_errno(what, errno);
  return rc;
}

// Read exactly n bytes; EOF before n bytes is a failure.
inline void read_exact(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got > 0) {
      p += got;
      n -= static_cast<std::size_t>(got);
    } else if (got == 0) {
      die("read: unexpected end of file");
    } else if (errno != EINTR) {
      die_errno("read", errno);
    }
  }
}

inline void write_exact(int fd, const void* buf, std::size_t n) {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t put = ::write(fd, p, n);
    if (put >= 0) {
      p += put;
      n -= static_cast<std::size_t>(put);
    } else if (errno != EINTR) {
      die_errno("write", errno);
    }
  }
}

// CLOCK_MONOTONIC in nanoseconds.
inline std::uint64_t now_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// The compiler barriers of kbench, all here. do_not_optimize keeps the
// compiler from deleting a computation whose result is unused, and from
// caching memory in registers across the barrier: memory loops in the
// benchmarks pass their accumulator through here once per pass. opaque(v)
// returns v as a value the compiler can no longer treat as a known constant
// (a multiplier, a store pattern): the same empty asm on a register. It is
// not do_not_optimize(T&) because that one's "+r,m" (a register or memory,
// whichever the loop has it in) is rejected by GCC 12 for a variable it
// knows to be a constant ("impossible constraint in asm"), and "+r" alone
// there would add loads and stores to loops that keep their value in
// memory (lat_harness clock, the ctl_machine alu control).
template <typename T>
inline void do_not_optimize(T const& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}
template <typename T>
inline void do_not_optimize(T& value) {
  asm volatile("" : "+r,m"(value) : : "memory");
}
template <typename T>
inline T opaque(T v) {
  asm volatile("" : "+r"(v));
  return v;
}
inline void clobber_memory() { asm volatile("" : : : "memory"); }

}  // namespace kbench
