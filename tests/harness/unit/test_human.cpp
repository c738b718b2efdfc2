// test_human.cpp — the binaries' stderr line in human units (human.hpp), on
// fixed values: the unit boundaries, rounding to three digits, bandwidth in
// decimal units.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "harness/internal/human.hpp"

using kbench::human_bandwidth;
using kbench::human_rate;
using kbench::human_time_ns;

TEST_CASE("three_digits: three significant digits, no exponent") {
  CHECK(kbench::three_digits(789.9) == "790");
  CHECK(kbench::three_digits(99.94) == "99.9");
  CHECK(kbench::three_digits(99.96) == "100");
  CHECK(kbench::three_digits(1.049) == "1.05");
  CHECK(kbench::three_digits(12.34) == "12.3");
  CHECK(kbench::three_digits(0.3124) == "0.312");
  CHECK(kbench::three_digits(0) == "0");
}

TEST_CASE("human_time_ns: ns, µs, ms and s at their boundaries") {
  CHECK(human_time_ns(0.3124) == "0.312 ns");
  CHECK(human_time_ns(118.126) == "118 ns");
  CHECK(human_time_ns(999.4) == "999 ns");
  CHECK(human_time_ns(999.6) == "1.00 µs");  // not "1000 ns"
  CHECK(human_time_ns(1000) == "1.00 µs");
  CHECK(human_time_ns(1049) == "1.05 µs");
  CHECK(human_time_ns(7.899e5) == "790 µs");
  CHECK(human_time_ns(999.4e3) == "999 µs");
  CHECK(human_time_ns(999.6e3) == "1.00 ms");
  CHECK(human_time_ns(12.34e6) == "12.3 ms");
  CHECK(human_time_ns(1e9) == "1.00 s");
  CHECK(human_time_ns(2.5e12) == "2500 s");  // seconds are the largest unit
}

TEST_CASE("human_bandwidth: decimal units, 1 MB = 10^6 B") {
  CHECK(human_bandwidth(512) == "512 B/s");
  CHECK(human_bandwidth(830e3) == "830 kB/s");
  CHECK(human_bandwidth(118.4e6) == "118 MB/s");
  CHECK(human_bandwidth(999.6e6) == "1.00 GB/s");
  CHECK(human_bandwidth(12.34e9) == "12.3 GB/s");
  CHECK(human_bandwidth(12.34e9, true) == "12.3 GB/s (10^9 B/s)");
  CHECK(human_bandwidth(118.4e6, true) == "118 MB/s (10^6 B/s)");
  CHECK(human_bandwidth(512, true) == "512 B/s");
}

TEST_CASE("human_rate: operations per second with k, M, G") {
  CHECK(human_rate(830) == "830 ops/s");
  CHECK(human_rate(12340) == "12.3k ops/s");
  CHECK(human_rate(2.414e6) == "2.41M ops/s");
  CHECK(human_rate(1.5e9) == "1.50G ops/s");
}

TEST_CASE("summary_line: a latency case's median, min and spread") {
  const std::vector<double> ns{7.899e5, 6.638e5, 8.5e5, 7.9e5};  // median 7.8995e5
  CHECK(kbench::summary_line("lat_proc fork", ns, 3, std::nullopt) ==
        "lat_proc fork: median 790 µs per op, min 664 µs, spread 23.6% of median, 4 samples x 3 iters");
  CHECK(kbench::summary_line("lat_syscall null", {118.126, 109.7, 148.0}, 17797, std::nullopt) ==
        "lat_syscall null: median 118 ns per op, min 110 ns, spread 32.4% of median, 3 samples x 17797 iters");
}

TEST_CASE("summary_line: a bandwidth case in decimal units, its best sample the max") {
  // 4096 bytes in 331.9 ns = 12.34 GB/s; in 300 ns = 13.65 GB/s
  CHECK(kbench::summary_line("bw_pipe stream", {331.9, 300.0, 400.0}, 5, 4096) ==
        "bw_pipe stream: median 12.3 GB/s (10^9 B/s), max 13.7 GB/s, spread 30.1% of median, 3 samples x 5 iters");
  CHECK(kbench::summary_line("bw_file_rd", {40960.0}, 1, 4096) ==
        "bw_file_rd: median 100 MB/s (10^6 B/s), max 100 MB/s, spread 0.0% of median, 1 samples x 1 iters");
}

TEST_CASE("aggregate_summary_line: the copies' summed rate and their own time per op") {
  CHECK(kbench::aggregate_summary_line("lat_syscall null x2", 2, {2.414e6, 2.0e6, 2.5e6}, {830.0, 820.0, 900.0}) ==
        "lat_syscall null x2: 2 copies: aggregate median 2.41M ops/s, per copy median 830 ns per op");
}
