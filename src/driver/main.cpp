// main.cpp — kbench-run: discover the benchmark cases, run each of them R
// times in a shuffled order per rep, and write the run directory.
//
// The steps are in their own files (options, discover, meta, spawn,
// results, schedule, progress, table); this file holds the sequence and the
// rules that tie them together: what is written when, so that an
// interrupted run can be resumed without losing or duplicating anything.
//   1. meta.json (status "running") and cases.jsonl (the --list line of
//      every discovered case, verbatim) before the first invocation;
//   2. per invocation: its samples, then its runs.jsonl record;
//   3. meta.json rewritten at the end: "complete" or "interrupted";
//   4. samples.jsonl and runs.jsonl compressed into .gz (compress.hpp), and
//      made plain again by --resume before it appends.
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/compress.hpp"
#include "driver/discover.hpp"
#include "driver/scaling.hpp"
#include "harness/internal/affinity.hpp"
#include "driver/json_value.hpp"
#include "driver/lava.hpp"
#include "driver/meta.hpp"
#include "driver/options.hpp"
#include "driver/plan.hpp"
#include "driver/profile.hpp"
#include "driver/progress.hpp"
#include "driver/results.hpp"
#include "driver/rundir.hpp"
#include "driver/schedule.hpp"
#include "driver/scratch.hpp"
#include "driver/signals.hpp"
#include "driver/spawn.hpp"
#include "driver/table.hpp"

namespace kbench::driver {
namespace {

void say(const std::string& msg) { std::fprintf(stderr, "kbench-run: %s\n", msg.c_str()); }

// A case never gets more reps than this from the budget.
constexpr int kMaxReps = 60;

double monotonic_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::string format_percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", f * 100.0);
  return buf;
}

// The cases this run will invoke: the selected ones, plus the control cases
// (never filtered by --only: they measure the machine, whatever is run),
// with one-party cases pinned to one CPU. Pinning them takes away a
// per-process lottery of where the scheduler puts a process (and, on hybrid
// CPUs, which kind of core); the CPU is recorded in the options.
std::vector<Case> runnable_cases(const std::vector<Case>& found, Options& o) {
  std::vector<Case> out;
  for (const auto& c : select_cases(found, o.only, o.skip))
    if (!c.control) out.push_back(c);
  if (o.controls)
    for (const auto& c : select_cases(found, "", o.skip))
      if (c.control) out.push_back(c);
  if (o.pin && o.pin_cpu < 0) {
    const auto& cpus = kbench::allowed_cpus();
    o.pin_cpu = cpus.empty() ? 0 : cpus.back();
  }
  if (!o.pin) return out;
  for (auto& c : out) {
    const bool one_party = c.name.find(" @") == std::string::npos;
    const bool has_cpu = std::find(c.args.begin(), c.args.end(), "--cpu") != c.args.end();
    const bool copies = std::find(c.args.begin(), c.args.end(), "--copies") != c.args.end();  // placed by --copies
    if (!one_party || has_cpu || copies) continue;
    c.args.insert(c.args.end(), {"--cpu", std::to_string(o.pin_cpu)});
    c.placement = "pinned";
  }
  return out;
}

std::string default_bin_dir(const char* argv0) {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string exe;
  if (n > 0) {
    exe.assign(buf, static_cast<std::size_t>(n));
  } else {
    exe = argv0;  // no /proc (early initramfs): trust the path we were run by
  }
  const auto slash = exe.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : exe.substr(0, slash);
}

std::string absolute(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf)) return buf;
  return path;  // the error comes later, from opendir, with a better message
}

void print_warnings(const std::vector<std::string>& w) {
  for (const auto& s : w) say("warning: " + s);
}

void push_warnings(JsonValue& meta, const std::vector<std::string>& w) {
  JsonValue* list = meta.find("warnings");
  if (!list || !list->is_array()) list = &meta.set("warnings", JsonValue::array());
  for (const auto& s : w) list->push(JsonValue::string(s));
}

JsonValue list_failures_json(const std::vector<ListFailure>& failures) {
  JsonValue list = JsonValue::array();
  for (const auto& f : failures) {
    JsonValue j = JsonValue::object();
    j.set("binary", JsonValue::string(f.binary));
    j.set("status", JsonValue::string(f.status));
    j.set("reason", JsonValue::string(f.reason));
    list.push(j);
  }
  return list;
}

int print_list(const Options& o, const std::vector<Case>& cases) {
  for (const auto& c : cases) std::printf("%s\n", c.name.c_str());
  const double per = estimate_invocation_s(o);
  const double total = per * double(cases.size()) * o.reps;
  std::printf("# %zu cases x %d reps = %zu invocations; estimated %s (rough: from the sample "
              "settings, slow operations take longer)\n",
              cases.size(), o.reps, cases.size() * static_cast<std::size_t>(o.reps),
              format_duration(total).c_str());
  if (o.profile)
    std::printf("# --profile: then one more invocation of each case under perf, about 2 s each\n");
  return std::fflush(stdout) == 0 ? 0 : 1;
}

// What identifies a run and where it is: made new, or read back by --resume.
struct RunState {
  std::string dir, id;
  std::uint64_t seed = 0;
  JsonValue meta;
  std::string runs_path() const { return dir + "/runs.jsonl"; }
  std::string samples_path() const { return dir + "/samples.jsonl"; }
};

// --resume: the run keeps its recorded options, seed and run id.
RunState load_resumed(Options& o) {
  RunState run;
  run.dir = o.resume;
  while (run.dir.size() > 1 && run.dir.back() == '/') run.dir.pop_back();
  std::string err;
  auto m = json_parse(read_whole_file(run.dir + "/meta.json"), &err);
  if (!m || !m->is_object()) throw std::runtime_error(run.dir + "/meta.json: not valid JSON: " + err);
  run.meta = *m;
  const JsonValue* opts = run.meta.find("options");
  const JsonValue* s = run.meta.find("seed");
  auto id = run.meta.get_string("run_id");
  if (!opts || !opts->is_object() || !s || !s->as_uint() || !id)
    throw std::runtime_error(run.dir + "/meta.json lacks options, seed or run_id");
  options_from_json(*opts, o);
  run.seed = *s->as_uint();
  run.id = *id;
  return run;
}

// meta.json at the start of a new run: the machine, the options, the state
// before the first invocation, status "running"; its warnings are printed.
JsonValue start_meta(const Options& o, const RunState& run, const Discovery& found, const std::vector<Case>& planned) {
  JsonValue meta = JsonValue::object();
  meta.set("schema", JsonValue::integer(1));
  meta.set("run_id", JsonValue::string(run.id));
  const JsonValue machine = machine_description();
  for (const auto& [k, v] : machine.members()) meta.set(k, v);
  meta.set("options", options_to_json(o));
  // A check, not a measurement: the scripts never pool it with full runs.
  meta.set("quick", JsonValue::boolean(o.quick));
  // The user's name for this kernel: runs with different labels are
  // different kernels in every report, whatever uname -r says.
  meta.set("label", o.label.empty() ? JsonValue() : JsonValue::string(o.label));
  // How a guest of scripts/vm-run runs ("emulated": QEMU without KVM, "kvm"):
  // the scripts never compare emulated timings with native ones. Null on a host.
  const char* virt = getenv("KBENCH_VIRT");
  meta.set("virt", virt && *virt ? JsonValue::string(virt) : JsonValue());
  meta.set("seed", JsonValue::unsigned_integer(run.seed));
  meta.set("started_utc", JsonValue::string(utc_now_iso()));
  meta.set("ended_utc", JsonValue());
  meta.set("loadavg_before", read_loadavg());
  meta.set("loadavg_after", JsonValue());
  meta.set("busy_processes", busy_processes(0.5, 5));
  meta.set("swap_before", read_swap_counters());
  meta.set("swap_after", JsonValue());
  meta.set("warnings", JsonValue::array());
  meta.set("status", JsonValue::string("running"));
  meta.set("list_failures", list_failures_json(found.failures));
  meta.set("cases_planned", JsonValue::integer(static_cast<long long>(planned.size())));
  // Which sizes the memory sweeps run here, and whether their largest is
  // main memory (the summary's "main mem" row): they follow the machine.
  meta.set("memory_sizes", memory_sizes(planned));
  meta.set("resumed_utc", JsonValue::array());
  const auto w = start_warnings(meta);
  push_warnings(meta, w);
  print_warnings(w);
  return meta;
}

// A new run: its seed, its directory (locked) and meta.json's first state.
RunState start_new_run(const Options& o, const Discovery& found, const std::vector<Case>& planned) {
  RunState run;
  run.seed = o.seed ? *o.seed : (random_u64() & 0xFFFFFFFFu);  // 32 bits: exact in any JSON reader
  const HostIds ids = host_ids();
  const RunDir d = create_run_dir(o.out, ids.host, ids.kernel_release, o.label);
  run.dir = d.path;
  run.id = d.run_id;
  lock_run_dir(run.dir);
  run.meta = start_meta(o, run, found, planned);
  return run;
}

// A resumed run: locked, its JSON Lines plain again to append to, "running"
// again, the time of this resume recorded.
void restart_resumed(RunState& run) {
  lock_run_dir(run.dir);
  for (const std::string& path : {run.samples_path(), run.runs_path()}) restore_file(path);
  run.meta.set("status", JsonValue::string("running"));
  JsonValue* resumed = run.meta.find("resumed_utc");
  if (!resumed || !resumed->is_array()) resumed = &run.meta.set("resumed_utc", JsonValue::array());
  resumed->push(JsonValue::string(utc_now_iso()));
}

// The declarations (category, summary column, curve, ...) the reports are
// built from; a resumed run keeps those recorded when it started.
void write_declarations(const std::string& run_dir, const Discovery& found, bool resumed) {
  const std::string path = run_dir + "/cases.jsonl";
  if (resumed && access(path.c_str(), F_OK) == 0) return;
  std::string text;
  for (const auto& c : found.cases) text += c.declaration + "\n";
  write_file_atomic(path, text);
}

// The driver's time on this run: this session's plus that of the sessions
// before a --resume (meta.json's driver_seconds).
class RunClock {
 public:
  explicit RunClock(const JsonValue& meta)
      : start_(monotonic_s()),
        before_(meta.find("driver_seconds") && meta.find("driver_seconds")->as_double()
                    ? *meta.find("driver_seconds")->as_double()
                    : 0.0) {}
  double spent() const { return before_ + (monotonic_s() - start_); }

 private:
  double start_, before_;
};

// Runs one invocation at a time and records it: its samples first, then its
// runs.jsonl record (a record is the promise that its samples are complete).
// Knows which (case, rep) pairs have finished, in earlier sessions too.
class Invoker {
 public:
  Invoker(const Options& o, const std::vector<Case>& cases, const RunState& run)
      : o_(o), cases_(cases), run_id_(run.id), extra_(extra_bench_args(o)),
        done_(finished_invocations(run.runs_path())) {
    if (!o.resume.empty()) {
      const int dropped = repair_samples(run.samples_path(), done_);
      if (dropped > 0) say("dropped " + std::to_string(dropped) + " sample lines of unfinished invocations");
    }
    samples_file_.open(run.samples_path());
    runs_file_.open(run.runs_path());
  }

  bool finished(const Invocation& inv) const { return done_.count({cases_[inv.case_index].name, inv.rep}) > 0; }
  int left_in(const std::vector<Invocation>& plan) const {
    int n = 0;
    for (const auto& inv : plan) n += finished(inv) ? 0 : 1;
    return n;
  }
  // Invocations run to the end (not interrupted) in this session.
  int ran() const { return ran_; }

  void run(const Invocation& inv, Progress& progress, int index_in_rep) {
    const Case& c = cases_[inv.case_index];
    const std::vector<std::string> argv = command(c, inv.rep);
    progress.starting(c.name, inv.round ? 0 : inv.group, index_in_rep);
    std::string scratch_error;
    if (!scratch_.prepare(&scratch_error) && !scratch_warned_) {
      say("warning: " + scratch_error + "; files of killed benchmarks may be left behind");
      scratch_warned_ = true;
    }
    const SpawnResult r = spawn_and_wait(argv, o_.timeout_s);
    Outcome out = judge(r, o_.timeout_s);
    out.temp_left = scratch_.sweep();
    if (out.temp_left != 0 && out.status == "ok")
      say("warning: " + c.name + " (rep " + std::to_string(inv.rep) + ") left " +
          (out.temp_left < 0 ? std::string("a temporary directory that could not be removed")
                             : std::to_string(out.temp_left) + " temporary entries") + " behind");
    if (!out.samples.empty()) samples_file_.append(out.samples);
    runs_file_.append(runs_record(run_id_, c, inv.rep, inv.round,
                                  std::vector<std::string>(argv.begin() + 1, argv.end()), r, out));
    if (out.status != "interrupted") {
      done_[{c.name, inv.rep}] = out.status;
      ++ran_;
    }
    progress.finished(c.name, inv.round ? 0 : inv.group, out.status, out.reason, r.duration_ms / 1000.0);
  }

 private:
  // BIN ARGS... --run-id ID --rep r --samples N [...]
  std::vector<std::string> command(const Case& c, int rep) const {
    std::vector<std::string> argv{c.binary};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    argv.insert(argv.end(), {"--run-id", run_id_, "--rep", std::to_string(rep)});
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    return argv;
  }

  const Options& o_;
  const std::vector<Case>& cases_;
  const std::string run_id_;
  const std::vector<std::string> extra_;
  std::map<CaseRep, std::string> done_;
  AppendFile samples_file_, runs_file_;
  ScratchDir scratch_;
  bool scratch_warned_ = false;
  int ran_ = 0;
};

// The first pass: every case `reps` times, rep by rep, skipping what an
// earlier session finished; progress counts the measured cases of a rep.
void run_first_pass(Invoker& invoker, const std::vector<Invocation>& plan, int to_run, int reps,
                    std::size_t n_measured) {
  Progress progress(to_run, reps, static_cast<int>(n_measured));
  int index_in_rep = 0, current_rep = -1, ran_this_rep = 0;
  for (const auto& inv : plan) {
    if (interrupt_signal()) break;
    if (inv.group != current_rep) {
      if (ran_this_rep > 0) progress.rep_done(current_rep);
      current_rep = inv.group;
      index_in_rep = 0;
      ran_this_rep = 0;
    }
    if (!inv.control) ++index_in_rep;
    if (invoker.finished(inv)) continue;
    invoker.run(inv, progress, std::max(0, index_in_rep - 1));
    ++ran_this_rep;
  }
  if (ran_this_rep > 0 && !interrupt_signal()) progress.rep_done(current_rep);
  progress.clear();
}

// The cases of the run, measured and control, as indexes into `cases`.
struct CaseKinds {
  std::vector<std::size_t> measured, controls;
};

CaseKinds case_kinds(const std::vector<Case>& cases) {
  CaseKinds k;
  for (std::size_t i = 0; i < cases.size(); ++i) (cases[i].control ? k.controls : k.measured).push_back(i);
  return k;
}

// The next budget round, from what the run has recorded so far: the reps
// the cases whose intervals are still too wide are worth in the `left`
// seconds (the measured cases' share of them: controls take one slot in
// control_every + 1), best gain per second first, and of that plan a third
// now (all of it in the last 10 s), so that each case's reps spread over
// the time left; empty when every case is precise enough. `round` is set to
// the round's number, `n_cases` to the cases it measures.
std::vector<Invocation> next_round(const Options& o, const std::vector<Case>& cases, const RunState& run,
                                   const CaseKinds& kinds, double left, int& round, std::size_t& n_cases) {
  const SoFar sf = read_so_far(run.runs_path(), run.samples_path(), cases);
  const bool controls = !kinds.controls.empty() && o.control_every > 0;
  const double measuring = controls ? left * o.control_every / (o.control_every + 1.0) : left;
  const auto chosen =
      choose_round(sf.cases, o.target_change, measuring, kMaxReps, left > 10.0 ? 3 : 1, o.headline_reps);
  n_cases = 0;
  if (chosen.empty()) return {};
  std::vector<int> next_rep;
  for (std::size_t k = 0; k < chosen.size(); ++k) {
    const bool repeat = k > 0 && chosen[k] == chosen[k - 1];
    next_rep.push_back(repeat ? next_rep.back() + 1 : sf.next_rep[chosen[k]]);
    n_cases += !repeat;
  }
  round = sf.max_round + 1;
  const int first_slot = std::max(sf.next_control_slot,
                                  o.reps * control_slots_per_rep(kinds.measured.size(), o.control_every));
  return round_plan(chosen, next_rep, kinds.controls, run.seed, round, o.control_every, first_slot);
}

// Budget rounds until the budget is spent, every case is precise enough or
// the driver is interrupted; returns how many rounds ran.
int run_budget_rounds(const Options& o, const std::vector<Case>& cases, const RunState& run,
                      const CaseKinds& kinds, Invoker& invoker, const RunClock& clock) {
  int rounds = 0;
  while (o.budget_s && !interrupt_signal()) {
    const double left = *o.budget_s - clock.spent();
    if (left < 1.0) break;
    int round = 0;
    std::size_t n_cases = 0;
    const std::vector<Invocation> rp = next_round(o, cases, run, kinds, left, round, n_cases);
    if (n_cases == 0) {
      say("every case can detect a change of " + format_percent(o.target_change) + " or less, or has " +
          std::to_string(kMaxReps) + " reps: no more rounds");
      break;
    }
    int n_reps = 0;
    for (const auto& inv : rp) n_reps += !inv.control;
    say("round " + std::to_string(round) + ": " + std::to_string(n_reps) + " more rep" + (n_reps == 1 ? "" : "s") +
        " of " + std::to_string(n_cases) + " case" + (n_cases == 1 ? "" : "s") + ", " + format_duration(left) +
        " of the budget left");
    Progress progress(static_cast<int>(rp.size()), 1, n_reps);
    int index = 0;
    for (const auto& inv : rp) {
      if (interrupt_signal()) break;
      if (!inv.control) ++index;
      if (invoker.finished(inv)) continue;
      invoker.run(inv, progress, std::max(0, index - 1));
    }
    progress.clear();
    ++rounds;
  }
  return rounds;
}

// meta.json at the end: times, rounds, the machine's state after, warnings,
// and "complete" or "interrupted"; replaced atomically.
void finish_meta(RunState& run, double spent, int rounds, int sig) {
  JsonValue& meta = run.meta;
  meta.set("ended_utc", JsonValue::string(utc_now_iso()));
  meta.set("driver_seconds", JsonValue::real(std::round(spent * 10) / 10));
  if (const JsonValue* r = meta.find("budget_rounds"); r && r->as_int()) rounds += static_cast<int>(*r->as_int());
  meta.set("budget_rounds", JsonValue::integer(rounds));
  meta.set("loadavg_after", read_loadavg());
  meta.set("busy_processes_after", busy_processes(0.5, 5));
  meta.set("swap_after", read_swap_counters());
  const auto w = end_warnings(meta);
  push_warnings(meta, w);
  print_warnings(w);
  meta.set("status", JsonValue::string(sig ? "interrupted" : "complete"));
  write_file_atomic(run.dir + "/meta.json", json_dump(meta, true) + "\n");
}

// The end on stderr: the table (unless --no-table), the failed cases, the
// counts; returns true if a case failed or a binary's --list did.
bool print_outcome(const Options& o, const RunState& run, const Discovery& found) {
  std::map<std::string, std::string> reasons;
  const auto statuses = case_statuses(run.runs_path(), &reasons);
  int n_ok = 0, n_skipped = 0, n_failed = 0;
  for (const auto& [name, st] : statuses) {
    if (st == "ok") ++n_ok;
    else if (st == "skipped") ++n_skipped;
    else ++n_failed;
  }
  if (o.table) print_table(stderr, run.samples_path(), statuses, reasons);
  // Every case that was not simply ok, with its reason: failed, skipped,
  // ran without an optional kernel feature.
  for (const auto& line : outcome_lines(run.runs_path(), run.samples_path())) say(line);
  int list_failed = 0;
  for (const auto& f : found.failures) list_failed += f.status != "skipped";
  say(std::to_string(statuses.size()) + (statuses.size() == 1 ? " case: " : " cases: ") + std::to_string(n_ok) + " ok, " +
      std::to_string(n_skipped) + " skipped, " + std::to_string(n_failed) + " failed" +
      (list_failed ? "; " + std::to_string(list_failed) +
                         (list_failed == 1 ? " binary" : " binaries") + " failed --list"
                   : ""));
  return n_failed > 0 || list_failed > 0;
}

// The run's JSON Lines files gzip-compressed (to about a tenth), or left as
// they are, with a warning, where that fails.
void compress_run_files(const RunState& run) {
  for (const std::string& path : {run.samples_path(), run.runs_path()}) {
    std::string why;
    if (access(path.c_str(), F_OK) == 0 && !compress_file(path, &why))
      say("warning: " + path + " left uncompressed: " + why);
  }
}

// After an interrupt: how far the run got and how to finish it.
void print_interrupted(int sig, int ran, int to_run, const std::string& run_dir) {
  // Budget rounds come after the first pass: "N of M" only within it.
  const std::string done_text = ran <= to_run ? std::to_string(ran) + " of " + std::to_string(to_run)
                                              : std::to_string(to_run) + " of " + std::to_string(to_run) +
                                                    " and " + std::to_string(ran - to_run) + " in budget rounds";
  say(std::string("interrupted by ") + strsignal(sig) + " after " + done_text +
      " invocations; to finish the run: kbench-run --resume " + run_dir);
}

// The run proper, once meta.json and cases.jsonl are written: the first
// pass, the budget rounds, meta.json's end, the summary. Returns the exit
// status.
int run_invocations(const Options& o, const std::vector<Case>& cases, const Discovery& found, RunState& run,
                    const PerfSetup& perf) {
  if (o.resume.empty() || !run.meta.find("driver_seconds")) run.meta.set("driver_seconds", JsonValue::real(0));
  Invoker invoker(o, cases, run);
  const CaseKinds kinds = case_kinds(cases);
  const std::vector<Invocation> plan = first_pass(kinds.measured, kinds.controls, o.reps, run.seed, o.control_every);
  const int to_run = invoker.left_in(plan);
  if (!o.resume.empty())
    say("resuming " + run.id + ": " + std::to_string(to_run) + " invocations of the first pass left");

  const RunClock clock(run.meta);
  run_first_pass(invoker, plan, to_run, o.reps, kinds.measured.size());
  const int rounds = run_budget_rounds(o, cases, run, kinds, invoker, clock);
  if (o.profile && !interrupt_signal()) {
    // After every measured invocation, never among them: perf's sampling
    // changes timings.
    const std::vector<std::string> profiled =
        run_profiles(cases, perf, o.profile_samples, o.timeout_s, run.dir, run.id);
    run.meta.set("profile", profile_meta(perf, o.profile_samples, profiled));
  }

  const int sig = interrupt_signal();
  finish_meta(run, clock.spent(), rounds, sig);
  const bool failed = print_outcome(o, run, found);
  if (sig) print_interrupted(sig, invoker.ran(), to_run, run.dir);
  if (o.lava)
    say("lava: " + std::to_string(report_lava(lava_results(cases, found.failures, run.runs_path(),
                                                            run.samples_path()),
                                               stdout)) +
        " test cases reported");
  compress_run_files(run);
  say("results in " + run.dir);
  std::printf("%s\n", run.dir.c_str());
  std::fflush(stdout);
  if (sig) return 128 + sig;
  return failed ? 1 : 0;
}

int run(int argc, char** argv) {
  install_signal_handlers();
  Options o;
  try {
    o = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kbench-run: %s\n%s", e.message.c_str(), usage_text());
    return 2;
  }
  if (o.help) {
    std::fputs(usage_text(), stdout);
    return 0;
  }
  RunState run;
  if (!o.resume.empty()) run = load_resumed(o);
  if (o.bin_dir.empty()) o.bin_dir = default_bin_dir(argv[0]);
  o.bin_dir = absolute(o.bin_dir);

  Discovery found = discover(o.bin_dir, o.timeout_s);
  if (o.scaling)
    add_scaling_cases(found, o.scaling->empty() ? kDefaultScaling : *o.scaling,
                      static_cast<int>(kbench::allowed_cpus().size()));
  if (interrupt_signal()) return 128 + interrupt_signal();
  for (const auto& f : found.failures)
    say(f.binary + " --list: " + f.status + ": " + f.reason);
  if (!o.samples) o.samples = kDefaultSamples;  // recorded resolved, for --resume
  const std::vector<Case> cases = runnable_cases(found.cases, o);
  if (o.list) return print_list(o, cases);
  if (cases.empty()) {
    say("no cases to run in " + o.bin_dir +
        (o.only.empty() && o.skip.empty() ? "" : " (after --only/--skip)"));
    return 1;
  }

  // perf is checked before the first invocation, so that what is missing
  // is said at the start, not after the measurements.
  PerfSetup perf;
  if (o.profile) {
    perf = probe_perf();
    if (!perf.usable()) say("warning: no profiles: " + perf.unavailable + "; the run goes on without them");
  }
  if (o.resume.empty()) {
    run = start_new_run(o, found, cases);
  } else {
    restart_resumed(run);
  }
  run.meta.set("profile", o.profile ? profile_meta(perf, o.profile_samples, {}) : JsonValue());
  if (o.profile && !perf.usable()) push_warnings(run.meta, {"no profiles: " + perf.unavailable});
  write_file_atomic(run.dir + "/meta.json", json_dump(run.meta, true) + "\n");
  write_declarations(run.dir, found, !o.resume.empty());
  return run_invocations(o, cases, found, run, perf);
}

}  // namespace
}  // namespace kbench::driver

int main(int argc, char** argv) {
  try {
    return kbench::driver::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbench-run: %s\n", e.what());
    return 1;
  }
}
