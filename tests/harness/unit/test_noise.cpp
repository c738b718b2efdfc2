// test_noise.cpp — the parsers behind run_delay_ns, steal_ns and migrations,
// on fixed text in the kernel's formats, and the deltas built from them.
#include <catch2/catch.hpp>

#include "harness/internal/noise.hpp"

using kbench::parse_proc_stat_steal;
using kbench::parse_sched_migrations;
using kbench::parse_schedstat_run_delay;

namespace {

// The head of a /proc/stat of a two-CPU guest (steal is the 8th value).
const char* const kStat =
    "cpu  34708 0 10967 33153 115 0 101 907 0 0\n"
    "cpu0 17017 0 5350 17095 14 0 32 400 0 0\n"
    "cpu1 17691 0 5616 16057 101 0 69 507 0 0\n"
    "cpu10 1 2 3 4 5 6 7 1010 9 10\n"
    "intr 209045 0 0 0 0 0 0\n"
    "ctxt 311113\n";

}  // namespace

TEST_CASE("schedstat: the second field is the run-queue delay") {
  CHECK(parse_schedstat_run_delay("3930487 98235 3\n") == 98235u);
  CHECK(parse_schedstat_run_delay("0 0 0\n") == 0u);
  CHECK(parse_schedstat_run_delay("18446744073709551615 18446744073709551614 1\n") == 18446744073709551614ull);
  CHECK_FALSE(parse_schedstat_run_delay(""));
  CHECK_FALSE(parse_schedstat_run_delay("3930487\n"));
  CHECK_FALSE(parse_schedstat_run_delay("3930487 98"));  // cut: maybe a prefix
  CHECK_FALSE(parse_schedstat_run_delay("x 1 2\n"));
  CHECK_FALSE(parse_schedstat_run_delay("1 -2 3\n"));
  CHECK_FALSE(parse_schedstat_run_delay("1 18446744073709551616 3\n"));  // overflows
}

TEST_CASE("/proc/stat: steal of the aggregate line, or of the pinned CPU's line") {
  CHECK(parse_proc_stat_steal(kStat, std::nullopt) == 907u);
  CHECK(parse_proc_stat_steal(kStat, 0) == 400u);
  CHECK(parse_proc_stat_steal(kStat, 1) == 507u);
  CHECK(parse_proc_stat_steal(kStat, 10) == 1010u);  // not cpu1's line
  CHECK_FALSE(parse_proc_stat_steal(kStat, 2));        // no such CPU
  CHECK_FALSE(parse_proc_stat_steal("", std::nullopt));
  // Kernels before 2.6.11 had no steal field.
  CHECK_FALSE(parse_proc_stat_steal("cpu  1 2 3 4 5 6 7\n", std::nullopt));
  // A line cut by a short buffer is not read.
  CHECK_FALSE(parse_proc_stat_steal("cpu  1 2 3 4 5 6 7 8 9", std::nullopt));
  CHECK(parse_proc_stat_steal("cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8", std::nullopt) == 8u);
  CHECK_FALSE(parse_proc_stat_steal("cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8", 0));
  // Exactly eight fields, the last ending the line, is enough.
  CHECK(parse_proc_stat_steal("cpu3 1 2 3 4 5 6 7 42\n", 3) == 42u);
}

TEST_CASE("/proc/<pid>/sched: se.nr_migrations") {
  const char* const sched =
      "bench (5804, #threads: 1)\n"
      "-------------------------------------------------------------------\n"
      "se.exec_start                                :        395961.614441\n"
      "se.vruntime                                  :             8.442036\n"
      "se.sum_exec_runtime                          :             1.042126\n"
      "se.nr_migrations                             :                    7\n"
      "nr_switches                                  :                    3\n";
  CHECK(parse_sched_migrations(sched) == 7u);
  CHECK(parse_sched_migrations("se.nr_migrations:12\n") == 12u);
  CHECK(parse_sched_migrations("se.nr_migrations_cold : 5\nse.nr_migrations : 6\n") == 6u);
  CHECK_FALSE(parse_sched_migrations("nr_switches : 3\n"));
  CHECK_FALSE(parse_sched_migrations("se.nr_migrations : 7"));  // cut
  CHECK_FALSE(parse_sched_migrations(""));
}

TEST_CASE("deltas: increases, steal ticks in ns, null when unknown or reset") {
  kbench::NoiseSnapshot a, b;
  a.run_delay_ns = 1000;
  b.run_delay_ns = 4500;
  a.steal_ticks = 10;
  b.steal_ticks = 12;
  a.migrations = 3;
  b.migrations = 3;
  auto d = kbench::noise_delta(a, b, 100);
  CHECK(d.run_delay_ns == 3500);
  CHECK(d.steal_ns == 20000000);  // 2 ticks of 10 ms
  CHECK(d.migrations == 0);
  b.migrations = 1;  // reset by a write to /proc/<pid>/sched
  b.steal_ticks.reset();
  d = kbench::noise_delta(a, b, 100);
  CHECK_FALSE(d.migrations);
  CHECK_FALSE(d.steal_ns);
  CHECK(d.run_delay_ns == 3500);
  CHECK_FALSE(kbench::noise_delta(a, a, 0).steal_ns);  // no USER_HZ
}

TEST_CASE("NoiseMarkers reads this process without failing") {
  kbench::NoiseMarkers m(std::nullopt);
  const auto a = m.read();
  const auto b = m.read();
  const auto d = m.delta(a, b);
  // Each file may be missing on some kernel; where present the increase is
  // a number, and it never goes backwards.
  CHECK(a.run_delay_ns.has_value() == d.run_delay_ns.has_value());
  CHECK(a.migrations.has_value() == d.migrations.has_value());
  if (d.run_delay_ns) CHECK(*d.run_delay_ns >= 0);
  if (d.steal_ns) CHECK(*d.steal_ns >= 0);
}
