// human.hpp — the numbers of a binary's stderr line, written for people:
// a time per operation in ns, µs, ms or s, a bandwidth in decimal bytes per
// second (1 MB = 10^6 B, as every table of the suite), a rate of operations,
// each to three significant digits. The samples on stdout keep every digit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

// Three significant digits: "790", "1.05", "12.3", "0.312".
std::string three_digits(double v);

// "0.312 ns", "118 ns", "1.05 µs", "790 µs", "12.3 ms", "2.00 s".
std::string human_time_ns(double ns);

// Decimal units: "512 B/s", "830 kB/s", "118 MB/s", "12.3 GB/s"; with
// define, the unit's size after it: "12.3 GB/s (10^9 B/s)".
std::string human_bandwidth(double bytes_per_s, bool define = false);

// Operations per second: "830 ops/s", "12.3k ops/s", "2.41M ops/s".
std::string human_rate(double per_s);

// A case's line: its median, best sample and spread over the samples of
// ns/op (for a bandwidth case, bytes_per_op: its MB/s), e.g.
// "lat_proc fork: median 790 µs per op, min 664 µs, spread 23.4% of median, 10 samples x 3 iters".
std::string summary_line(const std::string& case_id, const std::vector<double>& ns_per_op, std::uint64_t iters,
                         std::optional<std::uint64_t> bytes_per_op);

// The coordinator's line of --copies: the median aggregate rate (the copies'
// operations per second summed, per sample) and the copies' median ns/op.
std::string aggregate_summary_line(const std::string& case_id, int copies, const std::vector<double>& aggregate,
                                   const std::vector<double>& per_copy_ns);

}  // namespace kbench
