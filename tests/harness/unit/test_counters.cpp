// test_counters.cpp — the --counters list and what happens when counters
// cannot be opened (forced with KBENCH_FAIL_COUNTERS); per-sample counts from
// recorded readings (multiplexing), and partner CPU time from schedstat.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "harness/internal/counters.hpp"
#include "harness/internal/rusage.hpp"
#include "harness/internal/usage_error.hpp"

namespace {
// The message of the UsageError the list throws; "" if it parses.
std::string counters_error_of(const std::string& list) {
  try {
    kbench::parse_counter_list(list);
  } catch (const kbench::UsageError& e) {
    return e.message;
  }
  return "";
}
}  // namespace

TEST_CASE("counter lists: all, subsets, duplicates, unknown names") {
  CHECK(kbench::parse_counter_list("") == kbench::counter_names());
  CHECK(kbench::counter_names().size() == 12);
  CHECK(kbench::parse_counter_list("all").size() == 12);
  CHECK(kbench::parse_counter_list("cycles,instructions,cycles") == std::vector<std::string>{"cycles", "instructions"});
  CHECK(counters_error_of("cycles,bogus").rfind("--counters: unknown counter 'bogus' (known: instructions, cycles,", 0) == 0);
  CHECK(counters_error_of("cycles,").rfind("--counters: unknown counter ''", 0) == 0);
}

TEST_CASE("a counter that fails to open is null, the others still count") {
  setenv("KBENCH_FAIL_COUNTERS", "page_faults", 1);
  kbench::Counters c;
  c.open({"task_clock_ns", "page_faults"});
  unsetenv("KBENCH_FAIL_COUNTERS");
  // The group could not open, so the counters were opened one by one: the
  // one that opens alone still counts (unless perf events are off entirely).
  const auto v = c.read();
  REQUIRE(v.size() == 2);
  CHECK_FALSE(v[1].has_value());
  kbench::Counters alone;
  alone.open({"task_clock_ns"});
  if (alone.read()[0]) CHECK(v[0].has_value());
}

TEST_CASE("nothing requested, nothing opened") {
  kbench::Counters c;
  c.open({});
  CHECK_FALSE(c.active());
  CHECK(c.read().empty());
}

// Readings as perf_event read() returns them (value, time_enabled,
// time_running), recorded as a multiplexed counter would give them.
TEST_CASE("a sample's count is scaled by what happened during the sample") {
  using kbench::CounterReading;
  using kbench::counter_delta;
  // Not multiplexed: running == enabled, the raw difference.
  CHECK(counter_delta({1000, 5000, 5000}, {1700, 6000, 6000}) == 700);
  // Ran half of the sample: 50 counted in 500 ns of 1000 -> 100.
  CHECK(counter_delta({400, 2000, 1000}, {450, 3000, 1500}) == 100);
  // Rounded to the nearest: 10 * 3 / 2 = 15; 1 * 3 / 2 = 1.5 -> 2.
  CHECK(counter_delta({0, 0, 0}, {10, 3, 2}) == 15);
  CHECK(counter_delta({0, 0, 0}, {1, 3, 2}) == 2);
  // The old delta of two life-scaled totals: 101*1010/110 - 100*1000/100 =
  // 927 - 1000 < 0. The counter ran the whole sample (10 of 10 ns) and
  // counted 1: the count is 1.
  CHECK(counter_delta({100, 1000, 100}, {101, 1010, 110}) == 1);
  // Scheduled out for the whole sample: no estimate, never a zero.
  CHECK_FALSE(counter_delta({100, 1000, 100}, {100, 2000, 100}).has_value());
  CHECK_FALSE(counter_delta({5, 7, 7}, {5, 7, 7}).has_value());
  // Readings that go backwards (never from one counter): null, not a huge
  // uint64 difference cast to a negative count.
  CHECK_FALSE(counter_delta({100, 1000, 1000}, {99, 2000, 2000}).has_value());
  CHECK_FALSE(counter_delta({100, 1000, 1000}, {200, 999, 1000}).has_value());
  CHECK_FALSE(counter_delta({100, 1000, 1000}, {200, 2000, 999}).has_value());
  // Large counts do not overflow the scaling: 4e12 * 1e12 / 5e11.
  CHECK(counter_delta({0, 0, 0}, {4000000000000ull, 1000000000000ull, 500000000000ull}) == 8000000000000ll);
}

TEST_CASE("every sample count from a recorded multiplexed series is a non-negative whole number or null") {
  // A group read at the start and end of six samples, with the PMU share
  // changing between them (recorded shape: running grows unevenly).
  const kbench::CounterReading r[] = {{0, 0, 0},          {500, 1000, 1000}, {700, 2000, 1200},
                                      {700, 3000, 1200}, {900, 4000, 1600}, {1900, 5000, 2600}};
  const std::optional<std::int64_t> want[] = {500, 1000, std::nullopt, 500, 1000};
  for (std::size_t i = 0; i + 1 < std::size(r); ++i) {
    INFO("sample " << i);
    CHECK(kbench::counter_delta(r[i], r[i + 1]) == want[i]);
  }
}

TEST_CASE("a partner's CPU time is the first field of its schedstat, in ns") {
  // Recorded from /proc/<pid>/schedstat: runtime, run delay, timeslices.
  CHECK(kbench::parse_schedstat_runtime("6008976 1723217 2\n") == 6008976u);
  CHECK(kbench::parse_schedstat_runtime("123456789012345 0 7\n") == 123456789012345u);
  CHECK(kbench::parse_schedstat_runtime("0 0 0\n") == 0u);
  CHECK_FALSE(kbench::parse_schedstat_runtime("").has_value());
  CHECK_FALSE(kbench::parse_schedstat_runtime("x 1 2").has_value());
  CHECK_FALSE(kbench::parse_schedstat_runtime("12x 1 2").has_value());
  CHECK_FALSE(kbench::parse_schedstat_runtime("99999999999999999999999 1 2").has_value());
}
