// noise.hpp — per-sample markers of time the machine took away from us.
//
// What is measured: three counters read just outside each timed window
// (before t0 and after t1, like the rusage snapshot), reported as increases
// over the sample:
//   run_delay_ns  time the main thread spent runnable but waiting on a
//                 runqueue (2nd field of /proc/self/schedstat, ns);
//   steal_ns      time the hypervisor ran something else on our CPU (8th
//                 value of the cpuN line of /proc/stat when pinned, of the
//                 aggregate cpu line otherwise);
//   migrations    moves of the main thread between CPUs (se.nr_migrations
//                 of /proc/self/sched).
// Placement: the files are opened once and re-read with pread at offset 0,
// so a snapshot costs three small reads (about 10 us, mostly /proc/stat)
// and no open; none of it is in the timed window. runner.cpp takes steal and
// migrations outside the rusage snapshots and run delay inside them.
// Caveats: a file the kernel lacks (schedstat needs CONFIG_SCHED_INFO, sched
// needs CONFIG_SCHED_DEBUG) gives null, never an error; steal stays 0
// unless a hypervisor reports it. /proc/stat counts in USER_HZ ticks (usually 10 ms),
// so steal_ns is coarse: most samples see 0 or one whole tick. The
// aggregate cpu line sums every CPU, so unpinned steal can exceed the
// sample's wall time. The /proc/self files describe the main thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kbench {

// Pure parsers over a file's text (unit-tested with fixed input); nullopt
// when the text lacks the field or it is not a whole number.

// The second field of /proc/<pid>/schedstat: run-queue wait, ns.
std::optional<std::uint64_t> parse_schedstat_run_delay(std::string_view text);
// The steal value (8th number) of /proc/stat's "cpuN" line for `cpu`, or of
// the aggregate "cpu" line without one; USER_HZ ticks. The line must be
// complete (end in a newline): a truncated read is not a number.
std::optional<std::uint64_t> parse_proc_stat_steal(std::string_view text, std::optional<int> cpu);
// The value of "se.nr_migrations : N" in /proc/<pid>/sched.
std::optional<std::uint64_t> parse_sched_migrations(std::string_view text);

struct NoiseSnapshot {
  std::optional<std::uint64_t> run_delay_ns, steal_ticks, migrations;
};

struct NoiseDelta {
  std::optional<std::int64_t> run_delay_ns, steal_ns, migrations;
};

// Increases from a to b; null where either side is null or the value went
// backwards (a counter reset: /proc/<pid>/sched is reset by writing to it).
NoiseDelta noise_delta(const NoiseSnapshot& a, const NoiseSnapshot& b, long ticks_per_s);

class NoiseMarkers {
 public:
  // Opens the three files for the calling process; `cpu` is the CPU it is
  // pinned to (--cpu), if any. A file that does not open stays null.
  explicit NoiseMarkers(std::optional<int> cpu);
  NoiseMarkers(const NoiseMarkers&) = delete;
  NoiseMarkers& operator=(const NoiseMarkers&) = delete;
  ~NoiseMarkers();

  // Both parts below, the slower one first.
  NoiseSnapshot read();
  // Steal and migrations into s: two reads, /proc/stat the costlier (it is
  // built for every CPU and interrupt); taken outermost around a sample.
  void read_steal_migrations(NoiseSnapshot& s);
  // Run-queue delay into s: one small read, taken inside the rusage
  // snapshots (see runner.cpp).
  void read_run_delay(NoiseSnapshot& s);
  // The same as noise_delta with this machine's USER_HZ.
  NoiseDelta delta(const NoiseSnapshot& a, const NoiseSnapshot& b) const;

 private:
  // The file's text (at most buf.size() bytes, read into buf); nullopt if
  // it is not open or the read fails.
  static std::optional<std::string_view> read_file(int fd, std::vector<char>& buf);

  std::optional<int> cpu_;
  long ticks_per_s_;
  int schedstat_fd_ = -1, stat_fd_ = -1, sched_fd_ = -1;
  std::vector<char> schedstat_buf_, stat_buf_, sched_buf_;  // sized once, reused
};

}  // namespace kbench
