// bench.hpp — what a benchmark file sees of the harness.
//
// A benchmark binary is a list of case declarations (CaseSpec): a variant
// word, default parameters, a metric, the placement kind, where the case
// goes in the reports, and its Fixture constructed with its arguments. The
// harness does the rest identically for every binary: options, pinning, the
// setup probe, warm-up, calibration, sampling, rusage counters, JSON Lines
// output, exit codes, and cleanup of partners and temporary directories on
// exit or signal.
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
  // Extra flat integer keys in every sample, null when unknown (e.g. the
  // parent's size in lat_proc); may be updated in before_sample.
  void set_info_int(const std::string& key, std::optional<std::int64_t> value) { info_int_[key] = value; }
  const std::map<std::string, std::optional<std::int64_t>>& info_int() const { return info_int_; }
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
  std::map<std::string, std::optional<std::int64_t>> info_int_;
  std::uint64_t probe_iters_ = 1;
};

// CPU time and counts of work run() had done by a process the harness does
// not see: a helper program the fixture drives (lat_proc's forking helper),
// with the children it reaped. The harness adds them to the sample's own.
struct OutsideUsage {
  std::int64_t utime_ns = 0, stime_ns = 0, nvcsw = 0, nivcsw = 0, minflt = 0, majflt = 0;
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
  // What a helper process used for the last run(), asked after
  // after_sample() (which may ask the helper): see OutsideUsage.
  virtual OutsideUsage outside_usage() const { return {}; }
};

// ---- Declaring cases ----------------------------------------------------------
//
// Everything about a case is said once, where the binary lists its cases:
//
//   KBENCH_MAIN("lat_syscall", kbench::category("Processor and processes", 10).bench_rank(1),
//               {kbench::loop("null", null_loop).summary(kbench::column("null call", 1)),
//                kbench::fixture<DevIo>("read", false).summary(kNullIo),
//                kbench::fixture<FileOps>("fstat", FileOps::Op::fstat)})
//
// --list prints all of it (reference: benchmarks.md, Adding a benchmark); the driver records
// it and the reports build their tables and charts from it. Every builder
// call returns a modified copy, so a declared base can be reused.

// The summary table (and compare section) a case belongs to. `rank` orders
// the categories, lower first; bench_rank orders the binaries inside one: a
// case's rank there is bench_rank * 1000 + its index in the binary's list.
// Without a category a case is in "Other" (rank 1000, bench rank 999).
struct Category {
  std::string name;
  int rank = 1000;
  std::optional<int> bench;  // bench_rank
  Category bench_rank(int r) const {
    Category c = *this;
    c.bench = r;
    return c;
  }
};
inline Category category(std::string name, int rank) { return Category{std::move(name), rank, std::nullopt}; }

// A case's column in its category's summary table, `order` its position
// (1-based). Cases with the same label share the column. The cell is the
// case itself, or (one call):
//   mean()           the mean of every case with this label, per rep;
//   minus(v)         this case minus variant v of the bench, same params;
//   pick(p, n)       cases differing only in parameter p: p = n where every
//                    kernel has it, else the largest p every kernel has
//                    (else the largest present);
//   cache_levels(p)  columns L1, L2, L3, main memory at the machine's cache
//                    sizes (the label is only an id); the last is "main mem"
//                    where the largest p is at least 4x the last-level
//                    cache on every kernel, else "largest array";
//   largest(p)       the largest p present.
// per(k): the cell is the time per event counted by sample key k (a one-case
// column; e.g. per("minflt"): elapsed_ns / minflt of each sample, the cost of
// one page fault when one fault maps several pages).
// Two-party cases fill their column from @same. at(k, v): only for the cases
// whose parameter k is v (one point of a sweep).
class Column {
 public:
  struct Fields {
    std::string label, note, combine = "one", minus, size_param, per;
    int order = 0;
    std::optional<std::int64_t> prefer;
    Params where;
  };
  Column(std::string label, int order) {
    f_.label = std::move(label);
    f_.order = order;
  }
  Column note(std::string text) const { return with([&](Fields& f) { f.note = std::move(text); }); }
  Column mean() const { return with([](Fields& f) { f.combine = "mean"; }); }
  Column minus(std::string variant) const {
    return with([&](Fields& f) {
      f.combine = "minus";
      f.minus = std::move(variant);
    });
  }
  Column pick(std::string size_param, std::optional<std::int64_t> prefer = std::nullopt) const {
    return with([&](Fields& f) {
      f.combine = "pick";
      f.size_param = std::move(size_param);
      f.prefer = prefer;
    });
  }
  Column cache_levels(std::string size_param) const {
    return with([&](Fields& f) {
      f.combine = "cache_levels";
      f.size_param = std::move(size_param);
    });
  }
  Column largest(std::string size_param) const {
    return with([&](Fields& f) {
      f.combine = "largest";
      f.size_param = std::move(size_param);
    });
  }
  Column per(std::string sample_key) const { return with([&](Fields& f) { f.per = std::move(sample_key); }); }
  Column at(const std::string& key, std::string value) const {
    return with([&](Fields& f) { f.where[key] = std::move(value); });
  }
  const Fields& fields() const { return f_; }

 private:
  template <typename Fn>
  Column with(Fn fn) const {
    Column c = *this;
    fn(c.f_);
    return c;
  }
  Fields f_;
};
inline Column column(std::string label, int order) { return Column(std::move(label), order); }

// The case is a point of a curve chart: `x` is the parameter on the x axis
// (KB, log2 scale); cases with the same chart id share one figure, one line
// per kernel and (bench, variant, other params); panels are subplots.
class Curve {
 public:
  struct Fields {
    std::string chart, title, panel, x;
    bool log_y = false, cache_lines = false;
  };
  Curve(std::string chart, std::string title, std::string x) {
    f_.chart = std::move(chart);
    f_.title = std::move(title);
    f_.x = std::move(x);
  }
  Curve panel(std::string name) const {
    Curve c = *this;
    c.f_.panel = std::move(name);
    return c;
  }
  Curve log_y() const {
    Curve c = *this;
    c.f_.log_y = true;
    return c;
  }
  // Vertical lines at the machine's cache sizes.
  Curve cache_lines() const {
    Curve c = *this;
    c.f_.cache_lines = true;
    return c;
  }
  const Fields& fields() const { return f_; }

 private:
  Fields f_;
};
inline Curve curve(std::string chart, std::string title, std::string x) {
  return Curve(std::move(chart), std::move(title), std::move(x));
}

// One case declaration; start one with fixture<F>() or loop().
struct CaseSpec {
  // A parameter the case takes, with its default (units in the name).
  CaseSpec param(const std::string& key, std::string default_value) const {
    CaseSpec c = *this;
    c.params[key] = std::move(default_value);
    return c;
  }
  // MB/s from the bytes_per_op that setup() sets; higher is better. Without
  // it a case is a latency: ns per op, lower is better.
  CaseSpec bandwidth() const {
    CaseSpec c = *this;
    c.metric = Metric::bandwidth;
    return c;
  }
  // A partner process or thread: listed @same, @cross and @unpinned.
  CaseSpec two_party() const {
    CaseSpec c = *this;
    c.is_two_party = true;
    return c;
  }
  // A control: an operation whose cost no kernel can change (no system call,
  // no fault, no TLB miss in run()). The driver interleaves controls through
  // a run so that a change of the machine's own speed (frequency, a noisy
  // host, steal) can be told apart from a change of the kernel.
  CaseSpec control() const {
    CaseSpec c = *this;
    c.is_control = true;
    return c;
  }
  // Memory-bound: its cost follows the memory system's speed (DRAM and
  // cache bandwidth), which on a shared or virtual machine switches regimes
  // for minutes while CPU-bound work does not move. A memory-bound control
  // tracks that regime; the scripts judge memory-bound cases against it
  // (reference: statistics.md). Listed as "domain": "memory" ("cpu" otherwise).
  CaseSpec memory_bound() const {
    CaseSpec c = *this;
    c.domain = "memory";
    return c;
  }
  // File-system-bound: its cost depends on what the file system did in the
  // last minutes (inodes and blocks freed, dirty data, the journal), which
  // the runs before it leave behind, so it drifts between runs more than
  // CPU-bound work. Judged like a CPU-bound case, but the scripts measure
  // its drift between runs on its own (reference: statistics.md). Listed
  // as "domain": "fs".
  CaseSpec fs_bound() const {
    CaseSpec c = *this;
    c.domain = "fs";
    return c;
  }
  // A category other than the binary's (its bench rank stays the binary's
  // unless this one sets one).
  CaseSpec category(Category cat) const {
    CaseSpec c = *this;
    c.own_category = std::move(cat);
    return c;
  }
  // May be given several times with at(): the first that matches the case's
  // parameters is its column.
  CaseSpec summary(Column col) const {
    CaseSpec c = *this;
    c.columns.push_back(std::move(col));
    return c;
  }
  CaseSpec curve(Curve cv) const {
    CaseSpec c = *this;
    c.plot = std::move(cv);
    return c;
  }

  // What the harness reads.
  std::string variant;
  Params params;  // the defaults; also every key the case accepts
  Metric metric = Metric::latency;
  bool is_two_party = false;
  bool is_control = false;
  std::string domain = "cpu";
  std::optional<Category> own_category;
  std::vector<Column> columns;
  std::optional<Curve> plot;
  std::function<std::unique_ptr<Fixture>()> make;
};

// A case whose fixture is F(args...), constructed afresh for the run.
template <typename F, typename... A>
CaseSpec fixture(std::string variant, A... args) {
  CaseSpec c;
  c.variant = std::move(variant);
  c.make = [args...]() -> std::unique_ptr<Fixture> { return std::make_unique<F>(args...); };
  return c;
}

// The lambda form for trivial cases: fn(iters) is the timed loop.
CaseSpec loop(std::string variant, std::function<void(std::uint64_t)> fn);

// One case per value of `key` (other parameters, summary and curve as in
// `base`; see Column::at for a column on one of them).
std::vector<CaseSpec> sweep(const CaseSpec& base, const std::string& key,
                            const std::vector<std::string>& values);
// Each of `bases` once per value, in that order (a grid: sweep of a sweep).
std::vector<CaseSpec> sweep(const std::vector<CaseSpec>& bases, const std::string& key,
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

// A helper program the fixture started (fork and exec in setup) that must
// not outlive the benchmark: killed and reaped on exit, failure or signal,
// as partners are, but not counted as one (no partner_cpu_ns; the fixture
// reports its work through Fixture::outside_usage). release_helper once
// the fixture has reaped it itself.
void adopt_helper(pid_t pid);
void release_helper(pid_t pid);

// In --iters mode only (deterministic counts, for the tests to check), prints
// "<bench>: <what> <n> <unit>" on stderr and flushes it, e.g. a partner's
// "lat_pipe: partner served 301 operations". Silent otherwise. Partners
// call it at their graceful end.
void report_count(const Context& ctx, const std::string& what, std::uint64_t n, const std::string& unit);

// Pins the calling process/thread to one CPU; exit 77 if that CPU is not
// online and allowed.
void pin_to_cpu(int cpu);
// Places the calling process/thread where a partner runs: on --partner-cpu
// if given, else allowed on every CPU the binary could use (undoing a
// --cpu pinning inherited from its creator). spawn_partner does it for
// partner processes; a partner thread calls it first thing.
void pin_as_partner(const Context& ctx);

// The program's main: parses argv, runs or lists the cases. `category` is
// the default of every case that declares none.
int bench_main(const char* name, std::vector<CaseSpec> specs, int argc, char** argv);
int bench_main(const char* name, const Category& category, std::vector<CaseSpec> specs, int argc, char** argv);

}  // namespace kbench

// KBENCH_MAIN("bench", [category,] {specs...}) is the binary's main().
#define KBENCH_MAIN(name, ...)                                        \
  int main(int argc, char** argv) {                                   \
    return ::kbench::bench_main(name, __VA_ARGS__, argc, argv);       \
  }
