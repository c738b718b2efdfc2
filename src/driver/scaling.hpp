// scaling.hpp — kbench-run --scaling: the scaling cases (issue 15).
//
// A scaling case is a base case run with --copies N (reference: running.md, Scaling), for N
// = 1, 2, 4, ... below the number of allowed CPUs, and exactly that number.
// They are added to the discovered cases, so they run shuffled, repeated,
// budgeted and resumed like every other case. The base cases are those whose
// name matches the --scaling expression (default: kDefaultScaling); a
// two-party case scales as pairs per CPU (its @same listing) and as pairs
// across CPUs (its @cross listing: --cross-pairs); the cases of
// kThreadsScaling also scale as threads of one process (--threads).
#pragma once

#include <string>
#include <vector>

#include "driver/discover.hpp"

namespace kbench::driver {

// The default set: null syscall, anonymous page faults, fork, pipe and UDP
// round trips (a pair per CPU; UDP also pairs across CPUs), file creation, and the machine's own scaling:
// a control case (work no kernel can change), whose efficiency says what N
// CPUs of this machine give at best.
extern const char* const kDefaultScaling;
// The cases that also scale as threads: where threads and processes differ.
extern const char* const kThreadsScaling;

// 1, 2, 4, ... (< cpus), cpus; [1] with one CPU (its cases skip, 77).
std::vector<int> scaling_counts(int cpus);

// Appends to found.cases one case per base case matching `ere` (one-party,
// or a two-party case's @same or @cross listing), per count of scaling_counts(cpus)
// and per mode: "CASE xN" (processes) and, for kThreadsScaling, "CASE
// threads xN". Their declaration (cases.jsonl) is the base's with case,
// args and placement replaced, summary and curve null, category
// "Scaling (per copy)", control false, and copies, copy_mode, scaling_of and
// scaling_control (the base is a control case) added.
void add_scaling_cases(Discovery& found, const std::string& ere, int cpus);

}  // namespace kbench::driver
