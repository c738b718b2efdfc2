// test_median.cpp — kbench::median_of, the one median of the C++ side (a
// binary's human line, kbench-run's table and its budget rounds).
#include <catch2/catch.hpp>
#include <vector>

#include "harness/internal/median.hpp"

TEST_CASE("median_of: the middle value of an odd count, in any order") {
  CHECK(kbench::median_of({7}) == 7);
  CHECK(kbench::median_of({9, 1, 5}) == 5);
  CHECK(kbench::median_of({90, 10, 30, 20, 1000}) == 30);
}

TEST_CASE("median_of: the mean of the middle two of an even count") {
  CHECK(kbench::median_of({1, 2}) == 1.5);
  CHECK(kbench::median_of({90, 10, 30, 20}) == 25);  // not 20, not 30, not the mean 37.5
  CHECK(kbench::median_of({1, 1, 1, 100}) == 1);
}

TEST_CASE("median_of: 0 when empty; the argument is not reordered") {
  CHECK(kbench::median_of({}) == 0);
  const std::vector<double> v{3, 1, 2};
  CHECK(kbench::median_of(v) == 2);
  CHECK(v == std::vector<double>{3, 1, 2});
}
