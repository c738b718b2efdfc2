// test_counters.cpp — the --counters list and what happens when counters
// cannot be opened (forced with KBENCH_FAIL_COUNTERS).
#include <catch2/catch.hpp>
#include <cstdlib>

#include "harness/internal/counters.hpp"

TEST_CASE("counter lists: all, subsets, duplicates, unknown names") {
  std::vector<std::string> out;
  std::string error;
  REQUIRE(kbench::parse_counter_list("", out, error));
  CHECK(out == kbench::counter_names());
  CHECK(out.size() == 12);
  REQUIRE(kbench::parse_counter_list("all", out, error));
  CHECK(out.size() == 12);
  REQUIRE(kbench::parse_counter_list("cycles,instructions,cycles", out, error));
  CHECK(out == std::vector<std::string>{"cycles", "instructions"});
  CHECK_FALSE(kbench::parse_counter_list("cycles,bogus", out, error));
  CHECK(error.rfind("unknown counter 'bogus' (known: instructions, cycles,", 0) == 0);
  CHECK_FALSE(kbench::parse_counter_list("cycles,", out, error));
  CHECK(error.rfind("unknown counter ''", 0) == 0);
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
