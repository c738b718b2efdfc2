// table.hpp — the driver's own minimal summary of one run.
//
// For systems without Python (a board, an initramfs) and until the summary
// script exists: per case the headline value (median over reps of each
// rep's median), the spread of the rep medians, and the unit. All proper
// statistics live in scripts/; this is only a first look.
#pragma once

#include <cstddef>
#include <cstdio>
#include <map>
#include <set>
#include <string>

namespace kbench::driver {

// One case's headline value as the table shows it (and kbench-run --lava
// reports it): the median over reps of each rep's median, in ns/op or MB/s.
struct CaseEstimate {
  double value = 0;
  double rep_lo = 0, rep_hi = 0;        // the smallest and largest rep median
  std::size_t reps = 0;
  bool bandwidth = false;
  bool control = false;
  std::set<std::string> without;        // optional features it ran without
  const char* unit() const { return bandwidth ? "MB/s" : "ns/op"; }
};

// Every case with at least one valid sample in samples.jsonl (none when the
// file is missing).
std::map<std::string, CaseEstimate> case_estimates(const std::string& samples_path);

// Reads samples.jsonl; `statuses`/`reasons` (from runs.jsonl) fill in the
// rows of cases without samples.
void print_table(std::FILE* out, const std::string& samples_path,
                 const std::map<std::string, std::string>& statuses,
                 const std::map<std::string, std::string>& reasons);

}  // namespace kbench::driver
