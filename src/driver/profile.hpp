// profile.hpp — `kbench-run --profile`: why a case costs what it costs.
//
// After the measured reps and budget rounds, each profiled case runs once
// more, alone, under `perf record -g` (hardware cycles where the machine
// counts them, else the cpu-clock timer), for long enough to collect a
// minimum number of samples, with the kernel's event counters read around
// it (kevents.hpp). The recording goes to a private temporary directory and
// is removed once reduced to the compact profile (perf_script.hpp); one line
// per case goes to profiles.jsonl. The measured invocations are never
// profiled: perf's sampling changes timings.
//
// Without perf, or when perf could not see the kernel (perf_event_paranoid
// for an ordinary user, kptr_restrict hiding kernel symbols), the driver
// says what is missing and how to get it, and the profiled invocations
// still run for the event counts: the run goes on, its exit status is not
// changed by profiling.
#pragma once

#include <string>
#include <vector>

#include "driver/discover.hpp"
#include "driver/json_value.hpp"

namespace kbench::driver {

struct PerfSetup {
  std::string perf;          // the perf program, "" when none was found
  std::string version;       // `perf --version`
  std::string event;         // "cycles" or "cpu-clock"
  int frequency_hz = 0;      // sampling frequency asked of perf record
  std::string unavailable;   // why there are no profiles; "" when perf is usable
  bool usable() const { return unavailable.empty(); }
};

// Finds perf on PATH and checks that it can record this kernel's
// functions (a short recording of `true`).
PerfSetup probe_perf();

// meta.json's "profile" object.
JsonValue profile_meta(const PerfSetup& perf, int min_samples, const std::vector<std::string>& profiled);

// Profiles each case not yet in RUN_DIR/profiles.jsonl (an earlier session
// of a resumed run may have done some), appending one line per case; stops
// early on an interrupt. Returns the cases of profiles.jsonl that have a
// profile, in file order.
std::vector<std::string> run_profiles(const std::vector<Case>& cases, const PerfSetup& perf, int min_samples,
                                      double timeout_s, const std::string& run_dir, const std::string& run_id);

}  // namespace kbench::driver
