// options.hpp — the command line every benchmark binary shares.
//
// Parsing is a pure function (argv in, Options out) so it can be tested
// without exiting; a mistake throws UsageError (usage_error.hpp), which the
// runner turns into the usage text and exit 2.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/internal/usage_error.hpp"

namespace kbench {

struct Options {
  std::string variant;                        // positional word; "" = default
  std::uint64_t samples = 10;
  std::uint64_t warmup_ms = 5;
  bool warmup_given = false;
  std::uint64_t min_sample_ms = 2;
  std::optional<std::uint64_t> iters;         // fixed count: no calibration
  std::optional<int> cpu;
  std::optional<int> partner_cpu;
  std::map<std::string, std::string> params;  // --param k=v
  std::string run_id;
  std::uint64_t rep = 0;
  bool list = false;
  bool help = false;
  std::optional<std::string> counters;        // --counters[=LIST]
  // --copies N|all (copies.hpp): 0 = all; unset = one ordinary process.
  std::optional<std::uint64_t> copies;
  bool oversubscribe = false;                 // --oversubscribe
  bool copy_threads = false;                  // --threads
  bool cross_pairs = false;                   // --cross-pairs
};

// Throws UsageError for an unknown option, a missing or bad value, or a
// second variant.
Options parse_options(const std::vector<std::string>& args);

// Strict unsigned decimal; false for "", signs, junk, overflow.
bool parse_u64(const std::string& text, std::uint64_t& out);

// The usage text of a binary, listing its variants.
std::string usage_text(const std::string& prog, const std::vector<std::string>& variants);

}  // namespace kbench
