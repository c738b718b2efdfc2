// test_calibrate.cpp — calibration driven by a fake clock.
#include <catch2/catch.hpp>
#include <vector>

#include "harness/internal/calibrate.hpp"

namespace {

// A fake operation of fixed cost: the "clock" reads iters * cost_ns.
struct FakeOp {
  std::uint64_t cost_ns;
  std::vector<std::uint64_t> calls;
  std::uint64_t operator()(std::uint64_t iters) {
    calls.push_back(iters);
    return iters * cost_ns;
  }
};

}  // namespace

TEST_CASE("calibration stops at the first count that reaches the target") {
  for (std::uint64_t cost : {1ull, 37ull, 1000ull, 150000ull, 5000000ull}) {
    FakeOp op{cost, {}};
    const std::uint64_t target = 2000000;  // 2 ms
    const std::uint64_t n = kbench::calibrate([&](std::uint64_t i) { return op(i); }, target);
    INFO("cost " << cost << " -> " << n);
    CHECK(n * cost >= target);
    CHECK(n == op.calls.back());
    // Never more than the 10% margin (plus rounding) above what was needed,
    // unless a single operation already exceeds the target.
    const std::uint64_t needed = (target + cost - 1) / cost;
    CHECK(n <= needed * 12 / 10 + 1);
    // The accepted count was timed twice; every earlier attempt was below
    // the target, and counts only grew.
    REQUIRE(op.calls.size() >= 2);
    CHECK(op.calls[op.calls.size() - 2] == n);
    for (std::size_t i = 0; i + 2 < op.calls.size(); ++i) {
      CHECK(op.calls[i] * cost < target);
      CHECK(op.calls[i] < op.calls[i + 1]);
    }
    CHECK(op.calls.size() < 20);
  }
}

TEST_CASE("a clock that reads 0 for short runs still converges") {
  // A coarse clock: 1 us resolution, the op costs 3 ns.
  std::vector<std::uint64_t> calls;
  auto coarse = [&](std::uint64_t iters) {
    calls.push_back(iters);
    return (iters * 3 / 1000) * 1000;
  };
  const std::uint64_t n = kbench::calibrate(coarse, 1000000);
  CHECK((n * 3 / 1000) * 1000 >= 1000000);
  CHECK(calls.size() < 20);
}

TEST_CASE("one slow run does not stop the calibration at a tiny count") {
  // The first run at n=1 is hit by a 5 ms preemption; the op costs 100 ns.
  std::vector<std::uint64_t> calls;
  auto noisy = [&](std::uint64_t iters) {
    calls.push_back(iters);
    return iters * 100 + (calls.size() == 1 ? 5000000 : 0);
  };
  const std::uint64_t n = kbench::calibrate(noisy, 2000000);
  CHECK(n * 100 >= 2000000);
  CHECK(calls.at(0) == 1);
  CHECK(calls.at(1) == 1);
}

TEST_CASE("calibration respects max_iters") {
  auto never = [](std::uint64_t) { return std::uint64_t{0}; };
  CHECK(kbench::calibrate(never, 1000, 5000) == 5000);
}

TEST_CASE("a zero target takes one iteration") {
  FakeOp op{100, {}};
  CHECK(kbench::calibrate([&](std::uint64_t i) { return op(i); }, 0) == 1);
  CHECK(op.calls == std::vector<std::uint64_t>{1, 1});
}
