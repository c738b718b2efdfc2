// profile.cpp — the profile phase of a run (see profile.hpp).
#include "driver/profile.hpp"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "driver/kevents.hpp"
#include "driver/perf_script.hpp"
#include "driver/results.hpp"
#include "driver/rundir.hpp"
#include "driver/scratch.hpp"
#include "driver/signals.hpp"
#include "driver/spawn.hpp"
#include "harness/internal/cleanup.hpp"
#include "harness/internal/median.hpp"

namespace kbench::driver {

namespace {

void profile_say(const std::string& msg) { std::fprintf(stderr, "kbench-run: %s\n", msg.c_str()); }

// perf's default rate; the kernel may allow less.
constexpr int kFrequencyHz = 4000;
// The profiled invocation's timed part: at least this long, and never
// longer than the cap however few samples a case gives (a case that mostly
// sleeps gives few).
constexpr double kMinTimedS = 0.5;
constexpr double kMaxTimedS = 12.0;
constexpr int kAttempts = 3;
constexpr int kProfileSamplesPerRun = 5;  // --samples of the profiled invocation
// Frames of a call chain kept by perf script: system-call paths are well
// inside; deeper frames only matter to inclusive shares of the outermost.
constexpr const char* kMaxStack = "32";

double profile_now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  for (;;) {
    const auto colon = p.find(':', start);
    std::string dir = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    const std::string full = dir + "/" + name;
    if (access(full.c_str(), X_OK) == 0) return full;
    if (colon == std::string::npos) return "";
    start = colon + 1;
  }
}

std::optional<long> read_long(const char* path) {
  std::ifstream in(path);
  long v;
  if (in >> v) return v;
  return std::nullopt;
}

// Root, or a process allowed to profile the kernel (CAP_SYS_ADMIN, or
// CAP_PERFMON since Linux 5.8).
bool perf_privileged() {
  if (geteuid() == 0) return true;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    const unsigned long long caps = std::strtoull(line.c_str() + 7, nullptr, 16);
    return (caps >> 21 & 1) || (caps >> 38 & 1);
  }
  return false;
}

// /proc/kallsyms lists every address as 0 to whom kptr_restrict hides
// them; perf then cannot name a kernel function.
bool kernel_symbols_hidden() {
  std::ifstream in("/proc/kallsyms");
  std::string addr;
  if (!(in >> addr)) return true;
  return addr.find_first_not_of('0') == std::string::npos;
}

// A private directory for perf's files, under $TMPDIR (else /tmp); "" if
// it cannot be made.
std::string make_private_dir() {
  const char* env = std::getenv("TMPDIR");
  std::string templ = std::string(env && *env ? env : "/tmp") + "/kbench-profile-XXXXXX";
  return mkdtemp(templ.data()) ? templ : "";
}

std::string tail_reason(const SpawnResult& r) {
  if (!r.started) return r.error;
  std::string s = last_line(r.err_tail);
  if (s.empty() && r.exited) s = "exit status " + std::to_string(r.exit_code);
  if (s.empty() && r.signaled) s = std::string("killed by ") + strsignal(r.term_signal);
  return s;
}

std::string paranoid_text() {
  const auto p = read_long("/proc/sys/kernel/perf_event_paranoid");
  return p ? std::to_string(*p) : "unknown";
}

}  // namespace

PerfSetup probe_perf() {
  PerfSetup s;
  s.perf = find_on_path("perf");
  if (s.perf.empty()) {
    s.unavailable = "perf not found on PATH: install it (Debian: apt-get install linux-perf; Ubuntu: "
                    "linux-tools-$(uname -r)) for profiles";
    return s;
  }
  const SpawnResult v = spawn_and_wait({s.perf, "--version"}, 30);
  if (!v.exited || v.exit_code != 0) {
    s.unavailable = s.perf + " does not run (" + tail_reason(v) + "): install the linux-perf that matches this kernel";
    return s;
  }
  s.version = last_line(v.out);
  const auto paranoid = read_long("/proc/sys/kernel/perf_event_paranoid");
  if (!perf_privileged() && (!paranoid || *paranoid >= 2)) {
    s.unavailable = "perf_event_paranoid is " + paranoid_text() +
                    ": perf may not sample the kernel for an ordinary user; allow it with "
                    "sysctl kernel.perf_event_paranoid=1 (or run as root)";
    return s;
  }
  if (kernel_symbols_hidden()) {
    const auto k = read_long("/proc/sys/kernel/kptr_restrict");
    s.unavailable = "kptr_restrict is " + (k ? std::to_string(*k) : std::string("unknown")) +
                    ": /proc/kallsyms hides kernel addresses, so perf cannot name kernel functions; "
                    "allow it with sysctl kernel.kptr_restrict=0 (or 1 and run as root)";
    return s;
  }
  const auto max_rate = read_long("/proc/sys/kernel/perf_event_max_sample_rate");
  s.frequency_hz = max_rate && *max_rate > 0 ? int(std::min<long>(kFrequencyHz, *max_rate)) : kFrequencyHz;
  // Hardware cycles where the machine counts them (many VMs do not).
  const SpawnResult st = spawn_and_wait({s.perf, "stat", "-x,", "-e", "cycles", "--", "true"}, 30);
  s.event = "cpu-clock";
  if (st.exited && st.exit_code == 0) {
    std::istringstream lines(st.err_tail);
    std::string line;
    while (std::getline(lines, line))
      if (line.find(",cycles") != std::string::npos && !line.empty() && line[0] >= '0' && line[0] <= '9')
        s.event = "cycles";
  }
  const std::string dir = make_private_dir();
  if (dir.empty()) {
    s.unavailable = std::string("cannot make a private directory for perf's recording: ") + std::strerror(errno);
    return s;
  }
  const SpawnResult rec = spawn_and_wait({s.perf, "record", "-e", s.event, "-F", std::to_string(s.frequency_hz), "-g",
                                          "-N", "-q", "-o", dir + "/probe.data", "--", "true"}, 30);
  kbench::remove_tree(dir.c_str());
  if (!rec.exited || rec.exit_code != 0)
    s.unavailable = "perf record fails (" + tail_reason(rec) + "); perf_event_paranoid is " + paranoid_text() +
                    ": sysctl kernel.perf_event_paranoid=1 or running as root may allow it";
  return s;
}

JsonValue profile_meta(const PerfSetup& perf, int min_samples, const std::vector<std::string>& profiled) {
  JsonValue j = JsonValue::object();
  j.set("perf", perf.perf.empty() ? JsonValue() : JsonValue::string(perf.perf));
  j.set("perf_version", perf.version.empty() ? JsonValue() : JsonValue::string(perf.version));
  j.set("event", perf.usable() ? JsonValue::string(perf.event) : JsonValue());
  j.set("frequency_hz", perf.usable() ? JsonValue::integer(perf.frequency_hz) : JsonValue());
  j.set("min_samples", JsonValue::integer(min_samples));
  j.set("unavailable", perf.usable() ? JsonValue() : JsonValue::string(perf.unavailable));
  JsonValue cases = JsonValue::array();
  for (const auto& c : profiled) cases.push(JsonValue::string(c));
  j.set("cases", cases);
  return j;
}

namespace {

// One profiled invocation of a case for `timed_s` seconds of timed work.
struct Attempt {
  SpawnResult r;
  Outcome out;
  double ops = 0, ns_per_op = 0, seconds = 0;
  JsonValue events, profile;
  std::string profile_missing;
  long long samples = 0;
};

std::vector<std::string> case_args(const Case& c, const std::string& run_id, double timed_s) {
  std::vector<std::string> a{c.binary};
  a.insert(a.end(), c.args.begin(), c.args.end());
  const long sample_ms = std::max(1L, std::lround(timed_s * 1000.0 / kProfileSamplesPerRun));
  a.insert(a.end(), {"--run-id", run_id, "--samples", std::to_string(kProfileSamplesPerRun), "--min-sample-ms",
                     std::to_string(sample_ms)});
  return a;
}

// The timed operations and their median cost in the invocation's samples.
void read_samples(const std::string& lines, Attempt& a) {
  std::vector<double> ns;
  std::istringstream in(lines);
  std::string line;
  while (std::getline(in, line)) {
    const auto j = json_parse(line);
    if (!j || !j->is_object()) continue;
    if (const JsonValue* it = j->find("iters"); it && it->as_double()) a.ops += *it->as_double();
    if (const JsonValue* v = j->find("ns_per_op"); v && v->as_double()) ns.push_back(*v->as_double());
  }
  if (!ns.empty()) a.ns_per_op = kbench::median_of(ns);
}

Attempt attempt(const Case& c, const PerfSetup& perf, double timed_s, double timeout_s, const std::string& run_id) {
  Attempt a;
  std::vector<std::string> argv = case_args(c, run_id, timed_s);
  std::string dir;
  if (perf.usable()) {
    dir = make_private_dir();
    if (dir.empty()) {
      a.profile_missing = std::string("cannot make a private directory for perf's recording: ") + std::strerror(errno);
    } else {
      std::vector<std::string> rec{perf.perf, "record", "-e", perf.event, "-F", std::to_string(perf.frequency_hz),
                                   "-g", "-N", "-q", "-o", dir + "/perf.data", "--"};
      argv.insert(argv.begin(), rec.begin(), rec.end());
    }
  } else {
    a.profile_missing = perf.unavailable;
  }
  ScratchDir scratch;
  std::string scratch_error;
  scratch.prepare(&scratch_error);  // without it the binary uses the user's $TMPDIR
  const KernelCounters before = read_kernel_counters();
  const double t0 = profile_now_s();
  a.r = spawn_and_wait(argv, timeout_s + 3 * timed_s);
  a.seconds = profile_now_s() - t0;
  const KernelCounters after = read_kernel_counters();
  scratch.sweep();
  a.out = judge(a.r, timeout_s + 3 * timed_s);
  if (a.out.status == "ok") {
    read_samples(a.out.samples, a);
    a.events = kernel_events_per_op(before, after, a.ops, a.seconds);
    if (!dir.empty()) {
      const SpawnResult s = spawn_and_wait({perf.perf, "script", "-i", dir + "/perf.data", "-F",
                                            "event,period,ip,sym,dso", "--max-stack", kMaxStack},
                                           std::max(120.0, timeout_s));
      if (s.exited && s.exit_code == 0) {
        a.profile = summarize_perf_script(s.out);
        const JsonValue* n = a.profile.find("samples");
        a.samples = n && n->as_int() ? *n->as_int() : 0;
        if (s.out_truncated) a.profile.set("truncated", JsonValue::boolean(true));
      } else {
        a.profile_missing = "perf script failed: " + tail_reason(s);
      }
    }
  }
  if (!dir.empty()) kbench::remove_tree(dir.c_str());
  return a;
}

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", f * 100.0);
  return buf;
}

std::set<std::string> already_profiled(const std::string& path, std::vector<std::string>& with_profile) {
  std::set<std::string> done;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto j = json_parse(line);
    if (!j || !j->is_object()) continue;
    const auto name = j->get_string("case");
    if (!name) continue;
    done.insert(*name);
    const JsonValue* p = j->find("profile");
    if (p && p->is_object()) with_profile.push_back(*name);
  }
  return done;
}

}  // namespace

std::vector<std::string> run_profiles(const std::vector<Case>& cases, const PerfSetup& perf, int min_samples,
                                      double timeout_s, const std::string& run_dir, const std::string& run_id) {
  const std::string path = run_dir + "/profiles.jsonl";
  std::vector<std::string> with_profile;
  const std::set<std::string> done = already_profiled(path, with_profile);
  std::vector<const Case*> todo;
  for (const auto& c : cases)
    if (!c.control && !done.count(c.name)) todo.push_back(&c);
  if (todo.empty()) return with_profile;
  profile_say(perf.usable() ? "profiling " + std::to_string(todo.size()) + " case" + (todo.size() == 1 ? "" : "s") +
                          " under perf record (" + perf.event + ", at least " + std::to_string(min_samples) +
                          " samples each)"
                    : "no profiles (" + perf.unavailable + "); counting kernel events of " +
                          std::to_string(todo.size()) + " case" + (todo.size() == 1 ? "" : "s"));
  AppendFile out;
  out.open(path);
  int index = 0;
  for (const Case* c : todo) {
    if (interrupt_signal()) break;
    ++index;
    // Long enough for the samples at the sampling rate, with a margin for
    // what the process does outside its timed loop.
    double timed_s = kMinTimedS;
    if (perf.usable()) timed_s = std::max(kMinTimedS, 1.5 * min_samples / std::max(1, perf.frequency_hz));
    timed_s = std::min(timed_s, kMaxTimedS);
    Attempt a;
    int attempts = 0;
    for (;;) {
      a = attempt(*c, perf, timed_s, timeout_s, run_id);
      ++attempts;
      if (a.out.status != "ok" || a.profile.is_null() || a.samples >= min_samples || attempts >= kAttempts ||
          timed_s >= kMaxTimedS || interrupt_signal())
        break;
      timed_s = std::min(kMaxTimedS, timed_s * 1.3 * double(min_samples) / double(std::max(1LL, a.samples)));
    }
    if (a.out.status == "interrupted") break;
    JsonValue j = JsonValue::object();
    j.set("schema", JsonValue::integer(1));
    j.set("run_id", JsonValue::string(run_id));
    j.set("case", JsonValue::string(c->name));
    j.set("bench", JsonValue::string(c->bench));
    j.set("variant", JsonValue::string(c->variant));
    j.set("params", JsonValue::string(c->params));
    j.set("placement", JsonValue::string(c->placement));
    j.set("metric", JsonValue::string(c->metric));
    j.set("status", JsonValue::string(a.out.status));
    j.set("reason", JsonValue::string(a.out.reason));
    JsonValue args = JsonValue::array();
    for (const auto& s : case_args(*c, run_id, timed_s)) args.push(JsonValue::string(s));
    j.set("args", args);
    j.set("attempts", JsonValue::integer(attempts));
    j.set("duration_ms", JsonValue::real(std::round(a.r.duration_ms * 10) / 10));
    j.set("ops", JsonValue::real(a.ops));
    j.set("ns_per_op", a.ns_per_op > 0 ? JsonValue::real(std::round(a.ns_per_op * 1000) / 1000) : JsonValue());
    if (a.profile.is_object()) {
      a.profile.set("frequency_hz", JsonValue::integer(perf.frequency_hz));
      a.profile.set("min_samples", JsonValue::integer(min_samples));
      a.profile.set("enough_samples", JsonValue::boolean(a.samples >= min_samples));
    }
    j.set("profile", a.profile);
    j.set("profile_missing", a.profile.is_object() ? JsonValue()
                                                   : JsonValue::string(a.profile_missing.empty()
                                                                           ? "the profiled invocation " + a.out.status
                                                                           : a.profile_missing));
    j.set("events", a.events);
    out.append(json_dump(j) + "\n");
    std::string line = "profile " + std::to_string(index) + "/" + std::to_string(todo.size()) + ": " + c->name + ": ";
    if (a.out.status != "ok") {
      line += a.out.status + (a.out.reason.empty() ? "" : " (" + a.out.reason + ")");
    } else if (a.profile.is_object()) {
      with_profile.push_back(c->name);
      const JsonValue* ks = a.profile.find("kernel_share");
      line += std::to_string(a.samples) + " samples" +
              (ks && ks->as_double() ? ", " + percent(*ks->as_double()) + " in the kernel" : "");
      const JsonValue* top = a.profile.find("kernel_symbols");
      if (top && !top->items().empty())
        line += ", busiest " + top->items()[0].get_string("symbol").value_or("?") + " " +
                percent(top->items()[0].find("share")->as_double().value_or(0));
      if (a.samples < min_samples) line += " (fewer than " + std::to_string(min_samples) + ")";
    } else {
      line += "events only" + (a.profile_missing.empty() || !perf.usable() ? "" : " (" + a.profile_missing + ")");
    }
    profile_say(line + ", " + std::to_string(static_cast<long long>(std::lround(a.seconds * 10)) / 10) + "." +
        std::to_string(static_cast<long long>(std::lround(a.seconds * 10)) % 10) + " s");
  }
  return with_profile;
}

}  // namespace kbench::driver
