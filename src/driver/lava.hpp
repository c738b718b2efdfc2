// lava.hpp — kbench-run --lava: the run's cases as LAVA test results.
//
// A lab's root file system may have no Python, so the driver reports to
// LAVA itself at the end of a run: one test case per case, one test set per
// benchmark binary, through LAVA's own helpers (lava-test-case,
// lava-test-set) when they are on PATH (inside a LAVA test shell), else as
// the signal lines those helpers print:
//   <LAVA_SIGNAL_TESTSET START lat_syscall>
//   <LAVA_SIGNAL_TESTCASE TEST_CASE_ID=lat_syscall.null RESULT=pass MEASUREMENT=95.2 UNITS=ns/op>
//   <LAVA_SIGNAL_TESTSET STOP>
// The measurement is the driver table's value (median of rep medians).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "driver/discover.hpp"

namespace kbench::driver {

struct LavaResult {
  std::string id;           // the test case id: unique, no spaces or '/'
  std::string set;          // the test set: the benchmark binary
  std::string result;       // pass, fail or skip
  std::string measurement;  // "" = none (fail, skip)
  std::string units;
  std::string reason;       // why not pass
};

// "lat_udp rt family=ipv4,size=1 @same" -> "lat_udp.rt.family-ipv4.size-1.same".
std::string lava_name(const std::string& case_name);

// The results of every runnable case (in `cases` order, grouped by
// benchmark) and of every binary whose --list failed, from the run's files.
// Ids are made unique (".2", ".3", ... on a clash).
std::vector<LavaResult> lava_results(const std::vector<Case>& cases, const std::vector<ListFailure>& list_failures,
                                     const std::string& runs_path, const std::string& samples_path);

// Reports them: the helpers when on PATH, else signal lines on `out`; a
// line "kbench-run: lava: ID: RESULT: REASON" on `out` before every case
// that did not pass. Returns how many were reported.
int report_lava(const std::vector<LavaResult>& results, std::FILE* out);

}  // namespace kbench::driver
