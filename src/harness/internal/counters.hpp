// counters.hpp — per-sample perf counters (--counters[=LIST]).
//
// Opened before setup with inherit=1, so partners forked and threads started
// in setup are counted too. First tried as one group (all counters scheduled
// together); if the group cannot be opened, each counter alone. A counter
// this machine lacks is reported once on stderr and is null in every sample:
// never an error, never a silent zero. Kernel-mode counts are included when
// perf_event_paranoid (or privilege) allows; the scope is recorded.
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

class Counters {
 public:
  Counters() = default;
  Counters(const Counters&) = delete;
  Counters& operator=(const Counters&) = delete;
  ~Counters();

  // Opens the named counters for this process and its future children.
  void open(const std::vector<std::string>& names);
  bool active() const { return !names_.empty(); }

  // Current totals (scaled when multiplexed), nullopt where unavailable.
  std::vector<std::optional<std::uint64_t>> read() const;
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
