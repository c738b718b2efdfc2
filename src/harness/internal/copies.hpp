// copies.hpp — scaling mode: N copies of one case at once (--copies).
//
// Placement rule: copy i runs on the i-th CPU of the process's affinity mask
// (ascending), its partner, for a two-party case, on the same CPU (a pair
// per CPU), or with --cross-pairs on the next CPU, i+1 mod n (every pair
// spans two CPUs; at N = n each CPU holds one side of two pairs); with
// --oversubscribe, copy i on CPU i mod n. Copies are forked
// processes, or with --threads threads of one process (one-party cases).
//
// Every copy sets up, warms up and calibrates by itself, concurrently; the
// copies then agree on the largest calibrated count (all time the same
// number of operations), and each sample starts when the last copy reaches
// the start barrier (a futex word in a MAP_SHARED page; a short spin
// first), so all copies time the same window. Each copy hands its sample
// line to the coordinator (the original process), which writes the N lines
// of a sample in copy order, between the timed windows.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "harness/internal/json.hpp"
#include "harness/internal/options.hpp"

namespace kbench {

struct CopiesPlan {
  int copies = 1;
  std::vector<int> cpus;          // copy i's CPU
  std::vector<int> partner_cpus;  // its partner's: the same, or with --cross-pairs the next one
  bool cross_pairs = false;
  bool threads = false;
  bool oversubscribed = false;  // more copies than CPUs (--oversubscribe)
};

// The plan of --copies for this machine. Throws UsageError when there are
// more copies than allowed CPUs without --oversubscribe, or --threads with
// a two-party case; skips (77) with one CPU unless --oversubscribe.
CopiesPlan plan_copies(const Options& opt, bool two_party);

// One copy's view of the others.
class CopySync {
 public:
  CopySync(struct CopyShared* shared, const CopiesPlan& plan, int index);
  int index() const { return index_; }
  int cpu() const { return cpu_; }
  int partner_cpu() const { return partner_cpu_; }
  // All copies have calibrated: the largest of their counts.
  std::uint64_t agree_iters(std::uint64_t mine);
  // Sample `sample_idx` starts: returns when every copy is here (and the
  // previous sample's lines are written).
  void start(std::uint64_t sample_idx);
  // The copy's sample line and its figures, to the coordinator.
  void emit(const std::string& line, std::uint64_t t_start_ns, std::uint64_t elapsed_ns, std::uint64_t iters);
  // copies, copy_idx, copy_mode, oversubscribed (reference: running.md, Scaling).
  void add_keys(JsonObject& o) const;
  bool threads() const;

 private:
  struct CopyShared* shared_;
  int index_, cpu_, partner_cpu_;
};

// Runs body(copy) in every copy of `plan` (each pinned first) and writes the
// lines they emit to `out`; returns the exit status: 0, or the first
// failing copy's (its exit code, 128+signal), the others stopped.
int run_copies(const CopiesPlan& plan, std::uint64_t samples, const std::string& case_id, FILE* out,
               const std::function<int(CopySync&)>& body);

}  // namespace kbench
