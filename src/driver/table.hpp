// table.hpp — the driver's own minimal summary of one run.
//
// For systems without Python (a board, an initramfs) and until the summary
// script exists: per case the headline value (median over reps of each
// rep's median), the spread of the rep medians, and the unit. All proper
// statistics live in scripts/; this is only a first look.
#pragma once

#include <cstdio>
#include <map>
#include <string>

namespace kbench::driver {

// Reads samples.jsonl; `statuses`/`reasons` (from runs.jsonl) fill in the
// rows of cases without samples.
void print_table(std::FILE* out, const std::string& samples_path,
                 const std::map<std::string, std::string>& statuses,
                 const std::map<std::string, std::string>& reasons);

}  // namespace kbench::driver
