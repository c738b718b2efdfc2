// options.hpp — kbench-run's command line.
//
// Parsing is separate from running so that a bad option is reported before
// anything is created on disk, and so that --resume can rebuild the same
// Options from the "options" object recorded in meta.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/json_value.hpp"
#include "harness/internal/usage_error.hpp"

namespace kbench::driver {

// The default of --headline-reps (plan.hpp: headline_floor), and what a
// run recorded before the option existed had.
constexpr int kDefaultHeadlineReps = 40;
constexpr int kHeadlineRepsBefore = 20;

struct Options {
  std::string bin_dir;               // where the benchmark binaries are
  bool bin_dir_given = false;
  int reps = 5;
  std::optional<int> samples;        // passed on as --samples N when set
  bool quick = false;
  std::optional<std::string> counters; // passed on as --counters[=LIST]
  std::string only;                  // POSIX ERE on the case string; "" = all
  std::string skip;                  // POSIX ERE; "" = none
  std::string out = "results";
  double timeout_s = 60;             // --quick: 20 unless given
  std::optional<std::uint64_t> seed; // unset: drawn at random, then recorded
  bool list = false;
  std::string resume;                // run directory to resume; "" = new run
  bool table = true;
  bool lava = false;                 // --lava: report every case to LAVA at the end (lava.hpp)
  bool help = false;
  std::optional<double> budget_s;    // total time; extra reps where they narrow intervals most
  int pin_cpu = -1;                  // one-party cases' CPU; -1 = chosen (last allowed)
  bool pin = true;                   // false: --pin-cpu none, one-party cases unpinned
  int control_every = 10;            // a control invocation per this many cases
  bool controls = true;              // --no-controls
  std::string label;                 // --label: names this kernel in every report ("" = none)
  double target_change = 0.03;       // budget rounds stop at this detectable change
  int headline_reps = kDefaultHeadlineReps;  // --headline-reps: a summary table's case first (plan.hpp)
  bool profile = false;              // --profile: one more invocation per case under perf record
  int profile_samples = 2000;        // --profile-samples: the least perf samples a profile needs
  std::optional<std::string> scaling; // --scaling[=REGEX]: base cases also run at 1, 2, 4, ... all copies
};

// Throws UsageError (harness/internal/usage_error.hpp, the convention of
// both command lines); main prints it with the usage and exits 2.
Options parse_options(const std::vector<std::string>& args);
const char* usage_text();

// Samples per process when --samples is not given: reps spread in time,
// not samples inside one process, are what narrow an interval here.
constexpr int kDefaultSamples = 3;

// The extra arguments every invocation gets after the case's own args
// (besides --run-id/--rep): --samples and the --quick settings.
std::vector<std::string> extra_bench_args(const Options& o);

// Options as recorded in meta.json, and back (for --resume).
JsonValue options_to_json(const Options& o);
// Fills the run-shaping fields of `o` from meta.json's "options";
// bin_dir only when not given on the command line.
void options_from_json(const JsonValue& j, Options& o);

}  // namespace kbench::driver
