// plan.hpp — which invocations run, in what order: the first pass, the
// control cases threaded through it, and the extra rounds a time budget buys.
//
// Why this shape: on a shared machine the speed drifts over seconds to
// minutes, so a case's reps (separate processes) are the observations that
// matter, and they are worth most when spread over the whole run. Samples
// inside one process are nearly redundant. So:
//   - the first pass runs every case `reps` times, each rep in its own
//     shuffled order (schedule.hpp);
//   - control cases (whose cost no kernel can change) run between blocks of
//     `control_every` cases, cycling through the controls, so that they
//     trace the machine's speed over the whole run;
//   - with a budget, further rounds add reps to the cases whose interval is
//     still too wide for the minimum effect, planned over the time left by
//     the gain in precision per second (cheap cases get more), a third of
//     the plan per round, each round shuffled and threaded with controls
//     like a rep.
// Everything here is a pure function of its inputs, so --resume rebuilds the
// same first pass and the tests can check the plan without timings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "driver/options.hpp"

namespace kbench::driver {

struct Invocation {
  std::size_t case_index;  // into the run's case list
  int rep;                 // rep_idx stamped into its samples
  int round;               // 0 = first pass, k = k-th budget round
  bool control;
  int group;               // the first-pass rep (or the round) it runs in, for progress
};

// The first pass. `measured` and `controls` are indexes into the case list;
// `reps` reps of every measured case; controls before every block of
// `control_every` cases and after the last one of each rep (none when
// `controls` is empty or control_every is 0). A control's rep index is its
// slot number in the run (unique, not contiguous).
std::vector<Invocation> first_pass(const std::vector<std::size_t>& measured,
                                   const std::vector<std::size_t>& controls, int reps,
                                   std::uint64_t seed, int control_every);

// Control slots one first-pass rep uses (so a round's slots start after them).
int control_slots_per_rep(std::size_t n_measured, int control_every);

// One budget round: one more rep per entry of `chosen` (a case may appear
// several times; `next_rep[i]` is the rep index for chosen[i]), shuffled
// by (seed, round), controls threaded through from slot `first_slot` on.
std::vector<Invocation> round_plan(const std::vector<std::size_t>& chosen, const std::vector<int>& next_rep,
                                   const std::vector<std::size_t>& controls, std::uint64_t seed, int round,
                                   int control_every, int first_slot);

// What the budget logic knows of a case so far.
struct CaseSoFar {
  std::vector<double> rep_values;  // per-rep median ns/op of its ok reps
  double seconds = 0;              // total duration of its invocations
  int invocations = 0;
  bool usable = true;              // false: it failed or skipped somewhere
  bool headline = false;           // behind a summary table (its declaration has a summary column)
  bool first_table = false;        // and in the report's first one (the system calls, signals, processes)
};

// The smallest relative change a comparison of two runs like this one
// could detect (two-sided 5%, power 80%), from the spread of the log rep
// values: (t(.975) + t(.80)) * sqrt(2) * s / sqrt(n) with (n-1)/2 degrees
// of freedom. A robust s (the median absolute deviation, scaled), floored
// at the standard deviation's half so that two clusters of reps are not
// read as no spread. Infinite below 2 reps.
double detectable_change(const std::vector<double>& rep_values);

// The reps a summary table's case gets before any other case gets more:
// headline_reps where that is at most 20. Above, 20 for every summary table
// but the report's first (the system calls, signals and processes, the
// numbers a reader reads first); its cases get at least 20 and at most
// headline_reps, as many as a second holds at rep_seconds a rep (a cheap
// headline number gets the reps that narrow it between runs, a dear one
// does not take the budget).
int headline_floor(int headline_reps, double rep_seconds, bool first_table);

// How many more reps each case is worth in `seconds` of measuring. The
// candidates: usable cases with fewer than `max_reps` reps whose
// detectable_change is above `target`, and (up to 10 reps, a headline
// case up to its headline_floor) the precise ones with fewer (tight reps
// may all come from one stretch of the machine, and a headline number's
// low quantile must not rest on one rep); a headline case short of its
// floor goes first. Reps go one at a time to the case whose next rep narrows its
// interval most per second of its mean invocation: by log((n+1)/n), the
// same relative narrowing for every case, so cheap cases get more reps than
// dear ones. At least one rep when any case qualifies, even if it does not
// fit; 0 for the others.
std::vector<int> plan_reps(const std::vector<CaseSoFar>& cases, double target, double seconds, int max_reps,
                           int headline_reps = kDefaultHeadlineReps);

// One budget round: `parts` rounds are to share the plan of `seconds`, so
// each planned case gets ceil(its planned reps / parts) now (its reps spread
// over the run; the next round plans again from what this one measured).
// The case indexes, a case once per rep, ascending.
std::vector<std::size_t> choose_round(const std::vector<CaseSoFar>& cases, double target, double seconds,
                                      int max_reps, int parts, int headline_reps = kDefaultHeadlineReps);

}  // namespace kbench::driver
