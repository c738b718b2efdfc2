// discover.hpp — finding the benchmark cases: every binary's `--list`.
//
// There is no table of cases in the driver: a new src/bench/NAME.cpp becomes
// a new binary, and its --list says what it can run. A binary whose --list
// fails is reported and recorded, and the run goes on without it.
#pragma once

#include <string>
#include <vector>

namespace kbench::driver {

struct Case {
  std::string bench, variant, params, placement, name, metric;  // name = "case"
  std::string binary;                  // full path
  std::vector<std::string> args;       // after the binary name
  bool control = false;                // "control": true in --list: the kernel cannot change it
  std::string declaration;             // the --list line, verbatim (cases.jsonl)
};

struct ListFailure {
  std::string binary;   // file name
  std::string status;   // "failed", "skipped", "timeout", "crashed"
  std::string reason;
};

struct Discovery {
  std::vector<Case> cases;             // in binary-name order, then list order
  std::vector<ListFailure> failures;
};

// Throws std::runtime_error when the directory cannot be read at all.
Discovery discover(const std::string& bin_dir, double timeout_s);

// Cases whose name matches `only` (if not empty) and not `skip` (if not
// empty), both POSIX extended regular expressions, already validated.
std::vector<Case> select_cases(const std::vector<Case>& all, const std::string& only,
                               const std::string& skip);

// The last non-empty line of a stderr text, for skip and failure reasons.
std::string last_line(const std::string& text);

}  // namespace kbench::driver
