// test_counters.cpp — the --counters list and what happens when counters
// cannot be opened (forced with KBENCH_FAIL_COUNTERS).
#include <catch2/catch.hpp>
#include <cstdlib>

#include "harness/internal/counters.hpp"
#include "harness/internal/usage_error.hpp"

namespace {
// The message of the UsageError the list throws; "" if it parses.
std::string error_of(const std::string& list) {
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
  CHECK(error_of("cycles,bogus").rfind("--counters: unknown counter 'bogus' (known: instructions, cycles,", 0) == 0);
  CHECK(error_of("cycles,").rfind("--counters: unknown counter ''", 0) == 0);
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
