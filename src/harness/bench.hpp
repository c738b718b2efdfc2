// bench.hpp — what a benchmark file sees of the harness.
//
// A benchmark binary is a list of cases (CaseSpec): a variant word, default
// parameters, a metric and a factory for its Fixture. The harness does the
// rest identically for every binary: options, pinning, the setup probe,
// warm-up, calibration, sampling, rusage counters, JSON Lines output, exit
// codes, and cleanup of partners and temporary directories on exit or signal.
//
// Only Fixture::run() is timed. before_sample()/after_sample() run untimed
// around every run (the setup probe, warm-up and calibration included), for
// work that must be redone per sample (files to delete, a fresh directory).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/cleanup.hpp"
#include "harness/sys.hpp"

namespace kbench {

using Params = std::map<std::string, std::string>;

enum class Metric { latency, bandwidth };

class Context {
 public:
  Context(std::string bench, std::string variant, Params params, std::optional<int> cpu,
          std::optional<int> partner_cpu, bool fixed_iters)
      : bench_(std::move(bench)), variant_(std::move(variant)), params_(std::move(params)),
        cpu_(cpu), partner_cpu_(partner_cpu), fixed_iters_(fixed_iters) {}

  const std::string& bench() const { return bench_; }
  const std::string& variant() const { return variant_; }
  const Params& params() const { return params_; }
  // A declared parameter's value (the case declares every key it takes).
  const std::string& param(const std::string& key) const;
  // The parameter as a whole number; a bad value is a usage error (exit 2).
  std::uint64_t param_u64(const std::string& key) const;
  // The same, and outside [lo, hi] a usage error: "KEY must be between LO
  // and HI" (exit 2).
  std::uint64_t param_u64(const std::string& key, std::uint64_t lo, std::uint64_t hi) const;
  // The parameter as one of the allowed words; otherwise exit 2.
  const std::string& param_choice(const std::string& key, const std::vector<std::string>& allowed) const;

  std::optional<int> cpu() const { return cpu_; }
  std::optional<int> partner_cpu() const { return partner_cpu_; }
  // True with --iters: deterministic counts, e.g. for partners to verify.
  bool fixed_iters() const { return fixed_iters_; }

  // A private directory (mkdtemp under $TMPDIR, else /tmp), made on first
  // use and removed with its contents at exit, on failure or on a signal.
  const std::string& temp_dir();

  // Bandwidth cases: bytes one operation moves (required for them).
  void set_bytes_per_op(std::uint64_t bytes) { bytes_per_op_ = bytes; }
  std::optional<std::uint64_t> bytes_per_op() const { return bytes_per_op_; }
  // Extra flat string keys in every sample (e.g. fs_type).
  void set_info(const std::string& key, const std::string& value) { info_[key] = value; }
  const std::map<std::string, std::string>& info() const { return info_; }
  // Operations of the setup probe (default 1), e.g. one full round of a ring.
  void set_probe_iters(std::uint64_t n) { probe_iters_ = n; }
  std::uint64_t probe_iters() const { return probe_iters_; }

 private:
  std::string bench_, variant_;
  Params params_;
  std::optional<int> cpu_, partner_cpu_;
  bool fixed_iters_;
  std::string temp_dir_;
  std::optional<std::uint64_t> bytes_per_op_;
  std::map<std::string, std::string> info_;
  std::uint64_t probe_iters_ = 1;
};

// After setup() the harness runs the setup probe, untimed and once:
// before_sample(n), run(n), after_sample() with n = ctx.probe_iters(). It
// proves the path (an op that fails, fails before any sample) and touches
// what run() will; partners in --iters mode count it. A fixture writes no
// probe of its own.
class Fixture {
 public:
  virtual ~Fixture() = default;
  virtual void setup(Context&) {}
  virtual void before_sample(std::uint64_t /*iters*/) {}
  virtual void run(std::uint64_t iters) = 0;
  virtual void after_sample() {}
  virtual void teardown() {}
};

struct CaseSpec {
  std::string variant;
  Params params;  // the defaults; also every key the case accepts
  Metric metric = Metric::latency;
  bool two_party = false;
  std::function<std::unique_ptr<Fixture>()> make;
  // A control: an operation whose cost no kernel can change (no system call,
  // no fault, no TLB miss in run()). The driver interleaves controls through
  // a run so that a change of the machine's own speed (frequency, a noisy
  // host, steal) can be told apart from a change of the kernel. Last member,
  // so that brace-initialised specs elsewhere stay non-controls.
  bool control = false;
};

// The same case marked as a control (see CaseSpec::control).
inline CaseSpec as_control(CaseSpec c) {
  c.control = true;
  return c;
}

// A case whose fixture type is F (default-constructible).
template <typename F>
CaseSpec make_case(std::string variant, Params params = {}, Metric metric = Metric::latency,
                   bool two_party = false) {
  return CaseSpec{std::move(variant), std::move(params), metric, two_party,
                  [] { return std::unique_ptr<Fixture>(new F()); }};
}

// The lambda form for trivial cases: fn(iters) is the timed loop.
CaseSpec simple_case(std::string variant, std::function<void(std::uint64_t)> fn,
                     Params params = {});

// One case per value of `key` (other parameters as in `base`).
std::vector<CaseSpec> sweep(const CaseSpec& base, const std::string& key,
                            const std::vector<std::string>& values);

// Concatenates case lists.
std::vector<CaseSpec> cases(std::initializer_list<std::vector<CaseSpec>> lists);

// ---- Partners: the other side of an IPC pair --------------------------------

struct Partner {
  pid_t pid = -1;
};

// Forks a partner that runs body() then exits 0. It is pinned to
// --partner-cpu if given (else allowed on every CPU the binary could use),
// dies with its parent (PR_SET_PDEATHSIG), never runs the parent's cleanup,
// and is killed and reaped on any exit of the binary.
Partner spawn_partner(Context& ctx, const std::function<void()>& body);
// Waits for the partner to exit by itself; a non-zero exit or a signal is a
// failure of the benchmark. Returns nothing: it either exited 0 or we die.
void wait_partner(Partner& p);

// Pins the calling process/thread to one CPU; exit 77 if that CPU is not
// online and allowed.
void pin_to_cpu(int cpu);

// The program's main: parses argv, runs or lists the cases.
int bench_main(const char* name, std::vector<CaseSpec> specs, int argc, char** argv);
// The same with explicit arguments and output stream (used by tests).
int run_main(const char* name, const std::vector<CaseSpec>& specs,
             const std::vector<std::string>& args, FILE* out);

}  // namespace kbench

#define KBENCH_MAIN(name, ...)                                        \
  int main(int argc, char** argv) {                                   \
    return ::kbench::bench_main(name, __VA_ARGS__, argc, argv);       \
  }
