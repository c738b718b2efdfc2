// counters.hpp — per-sample perf counters (--counters[=LIST]).
//
// Opened before setup with inherit=1, so partners forked and threads started
// in setup are counted too. First tried as one group (all counters scheduled
// together); if the group cannot be opened, each counter alone. A counter
// this machine lacks is reported once on stderr and is null in every sample:
// never an error, never a silent zero. Kernel-mode counts are included when
// perf_event_paranoid (or privilege) allows; the scope is recorded.
//
// Under multiplexing (more hardware counters than the PMU has) a counter
// runs only part of the time it is enabled. A sample's count is scaled by
// what happened during that sample, counter_delta(), never by the
// counter's whole life: a delta of two life-scaled totals is wrong and can
// go negative when the running fraction changes between the two reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

// Every counter name --counters knows, in output order.
const std::vector<std::string>& counter_names();

// Parses the value of --counters: "" or "all" (every counter) or "a,b,c"
// (duplicates dropped); an unknown name throws UsageError ("--counters:
// unknown counter ...").
std::vector<std::string> parse_counter_list(const std::string& list);

// One counter's raw reading: its count and the times (ns) it has been
// enabled and actually running on the PMU since it was opened.
struct CounterReading {
  std::uint64_t value = 0, enabled = 0, running = 0;
};

// The count during a sample from the readings at its start and end:
// (v1 - v0) * (e1 - e0) / (r1 - r0), rounded to the nearest whole number,
// or the raw difference when the counter ran all the time it was enabled.
// nullopt when the counter never ran during the sample (r1 = r0: no
// estimate, never a zero) or when the readings go backwards. Never negative.
std::optional<std::int64_t> counter_delta(const CounterReading& start, const CounterReading& end);

class Counters {
 public:
  Counters() = default;
  Counters(const Counters&) = delete;
  Counters& operator=(const Counters&) = delete;
  ~Counters();

  // Opens the named counters for this process and its future children.
  void open(const std::vector<std::string>& names);
  bool active() const { return !names_.empty(); }

  // Current raw readings, nullopt where unavailable.
  std::vector<std::optional<CounterReading>> read() const;
  const std::vector<std::string>& names() const { return names_; }
  // "user+kernel", "user", or "none" when perf_event_open is not available
  // at all (every counter null).
  const std::string& scope() const { return scope_; }

 private:
  struct Slot {
    std::string name;
    int fd = -1;
  };
  bool open_group(bool exclude_kernel);
  void open_single(bool exclude_kernel);
  void close_all();

  std::vector<std::string> names_;
  std::vector<Slot> slots_;
  std::string scope_ = "user";
  std::string mode_ = "none";  // "group", "single" (one by one) or "none"
};

}  // namespace kbench
