// options.cpp — parsing and recording kbench-run's options.
//
// Hand-written rather than getopt_long so that the same table of rules gives
// one clear message per mistake ("--reps: expected a positive integer, got
// 'x'") and so that --resume can reject options that would change what the
// interrupted run meant.
#include "driver/options.hpp"

#include <fcntl.h>
#include <regex.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>

// Present only in sanitizer builds: the regex probe's child points the
// sanitizer's reports at /dev/null, since its running out of memory is the
// expected outcome of the probe, not a finding.
extern "C" void __sanitizer_set_report_fd(void* fd) __attribute__((weak));

namespace kbench::driver {

namespace {

const char kUsage[] =
    "usage: kbench-run [options]\n"
    "  --bin-dir DIR    benchmark binaries (default: the directory of kbench-run)\n"
    "  --reps R         process runs of every case in the first pass (default 5)\n"
    "  --budget SEC     total time: after the first pass, add reps (in shuffled rounds)\n"
    "                   to the cases whose intervals are widest per second of work\n"
    "  --samples N      pass --samples N to every binary (default 3)\n"
    "  --pin-cpu C|none CPU for one-party cases (default: the last one allowed)\n"
    "  --control-every K a control case between every K cases (default 10)\n"
    "  --headline-reps N with --budget, a summary table's case gets N reps (2-60) before\n"
    "                   any other case gets more; above 20, the other tables' 20 and the\n"
    "                   first table's (system calls, signals, processes) as many as take\n"
    "                   a second in all, at least 20 (default 40)\n"
    "  --no-controls    run no control cases\n"
    "  --label NAME     name this kernel in every report (e.g. patched; letters, digits, ._+-)\n"
    "  --quick          short check: --reps 2 --timeout 20, and --samples 3\n"
    "                   --min-sample-ms 1 --warmup-ms 1 for every binary\n"
    "  --counters[=LIST] pass --counters[=LIST] to every binary (perf counters per sample)\n"
    "  --only REGEX     run only cases matching REGEX (POSIX extended, on the case name)\n"
    "  --skip REGEX     do not run cases matching REGEX\n"
    "  --out DIR        results root (default: results)\n"
    "  --timeout SEC    limit per invocation (default 60)\n"
    "  --seed N         seed of the per-rep shuffle (default: random, recorded)\n"
    "  --profile        after the measured reps, run each case once more under perf record\n"
    "                   and keep its kernel profile and kernel event counts (profiles.jsonl)\n"
    "  --profile-samples N  the least perf samples per profile (default 2000)\n"
    "  --scaling[=REGEX] also run the cases matching REGEX (default: a small set) as 1, 2, 4,\n"
    "                   ... and all-CPU copies at once (binaries' --copies; src/reference/running.md)\n"
    "  --list           print the cases that would run and a rough time estimate\n"
    "  --resume RUNDIR  finish an interrupted run (only --bin-dir/--no-table/--lava may be added)\n"
    "  --no-table       do not print the summary table at the end\n"
    "  --lava           at the end, report every case to LAVA: a test case (its value and\n"
    "                   unit, or fail/skip) per case, a test set per benchmark, through\n"
    "                   lava-test-case/lava-test-set when on PATH, else their signal lines\n"
    "                   on stdout (before the run directory, still the last line)\n"
    "  --help           this text\n";

long long parse_integer(const std::string& opt, const std::string& v, long long lo, long long hi) {
  errno = 0;
  char* end = nullptr;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || errno != 0 || *end != '\0' || n < lo || n > hi)
    throw UsageError{opt + ": expected an integer in " + std::to_string(lo) + ".." +
                     std::to_string(hi) + ", got '" + v + "'"};
  return n;
}

// A number of seconds in (0, max].
double parse_seconds(const std::string& opt, const std::string& v, double max) {
  char* end = nullptr;
  errno = 0;
  const double t = std::strtod(v.c_str(), &end);
  if (v.empty() || errno != 0 || *end != '\0' || !std::isfinite(t) || t <= 0 || t > max)
    throw UsageError{opt + ": expected a number of seconds > 0, got '" + v + "'"};
  return t;
}

// glibc's regcomp can need memory exponential in the pattern (stacked or
// nested repetitions: 25 '+' signs in a row take gigabytes). So the pattern
// is first compiled in a child whose address space may grow by 64 MB and
// which has 1 s of CPU (and 5 s in all); if it does not manage, the pattern
// is refused. A pattern that names cases needs kilobytes and microseconds;
// the refusal costs the child its whole allowance: 0.2 s of CPU here at
// 64 MB (0.9 s at 256 MB). Under ASan, whose allocator reserves its space
// up front, the address-space limit never trips and the CPU limit stops it
// (SIGXCPU, caught: no core dump). The address-space limit is relative to
// the current size so that sanitizer builds, which reserve terabytes of
// shadow memory up front, work too.
void regex_cpu_spent(int) { _exit(4); }

bool regex_affordable(const std::string& re) {
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  const rlim_t now = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return true;  // cannot check: let regcomp below decide
  if (pid == 0) {
    const rlimit lim{now + (64u << 20), now + (64u << 20)};
    if (__sanitizer_set_report_fd) {
      const long fd = open("/dev/null", O_WRONLY);
      if (fd >= 0) __sanitizer_set_report_fd(reinterpret_cast<void*>(fd));
    }
    if (now > 0) setrlimit(RLIMIT_AS, &lim);
    std::signal(SIGXCPU, regex_cpu_spent);
    const rlimit cpu{1, 2};  // SIGXCPU after 1 s of CPU, SIGKILL after 2
    setrlimit(RLIMIT_CPU, &cpu);
    alarm(5);
    regex_t r;
    _exit(regcomp(&r, re.c_str(), REG_EXTENDED | REG_NOSUB) == REG_ESPACE ? 3 : 0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void check_regex(const std::string& opt, const std::string& re) {
  if (!regex_affordable(re))
    throw UsageError{opt + ": regular expression too costly to compile (nested or stacked repetitions): '" + re + "'"};
  regex_t r;
  const int rc = regcomp(&r, re.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char buf[256];
    regerror(rc, &r, buf, sizeof buf);
    throw UsageError{opt + ": bad regular expression '" + re + "': " + buf};
  }
  regfree(&r);
}

}  // namespace

const char* usage_text() { return kUsage; }

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  std::vector<std::string> given;  // which options appeared, for --resume
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> inline_value;
    if (name.rfind("--", 0) == 0) {
      const auto eq = name.find('=');
      if (eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) throw UsageError{name + ": missing value"};
      return args[++i];
    };
    auto no_value = [&] {
      if (inline_value) throw UsageError{name + ": takes no value"};
    };
    if (name == "--bin-dir") {
      o.bin_dir = value();
      o.bin_dir_given = true;
      if (o.bin_dir.empty()) throw UsageError{"--bin-dir: empty directory name"};
    } else if (name == "--reps") {
      o.reps = static_cast<int>(parse_integer(name, value(), 1, 100000));
    } else if (name == "--budget") {
      o.budget_s = parse_seconds(name, value(), 1e7);
    } else if (name == "--pin-cpu") {
      const std::string v = value();
      if (v == "none") {
        o.pin = false;
      } else {
        o.pin = true;
        o.pin_cpu = static_cast<int>(parse_integer(name, v, 0, 1 << 20));
      }
    } else if (name == "--control-every") {
      o.control_every = static_cast<int>(parse_integer(name, value(), 1, 100000));
    } else if (name == "--headline-reps") {
      o.headline_reps = static_cast<int>(parse_integer(name, value(), 2, 60));
    } else if (name == "--label") {
      o.label = value();
      if (o.label.empty() || o.label.size() > 40)
        throw UsageError{"--label: expected 1 to 40 characters, got '" + o.label + "'"};
      for (char c : o.label)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '+' || c == '-'))
          throw UsageError{"--label: only letters, digits and . _ + - are allowed, got '" + o.label + "'"};
    } else if (name == "--no-controls") {
      no_value();
      o.controls = false;
    } else if (name == "--samples") {
      o.samples = static_cast<int>(parse_integer(name, value(), 1, 1000000));
    } else if (name == "--quick") {
      no_value();
      o.quick = true;
    } else if (name == "--counters") {
      // The list is checked by the binaries (one place knows the names);
      // only characters that cannot be a counter list are refused here.
      o.counters = inline_value.value_or("");
      for (char c : *o.counters)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ','))
          throw UsageError{"--counters: expected a comma-separated list of counter names, got '" + *o.counters + "'"};
    } else if (name == "--only") {
      o.only = value();
      check_regex(name, o.only);
    } else if (name == "--skip") {
      o.skip = value();
      check_regex(name, o.skip);
    } else if (name == "--out") {
      o.out = value();
      if (o.out.empty()) throw UsageError{"--out: empty directory name"};
    } else if (name == "--timeout") {
      o.timeout_s = parse_seconds(name, value(), 1e6);
    } else if (name == "--seed") {
      const std::string v = value();
      errno = 0;
      char* end = nullptr;
      const unsigned long long s = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || v[0] == '-' || errno != 0 || *end != '\0')
        throw UsageError{"--seed: expected a non-negative integer, got '" + v + "'"};
      o.seed = s;
    } else if (name == "--profile") {
      no_value();
      o.profile = true;
    } else if (name == "--profile-samples") {
      o.profile_samples = static_cast<int>(parse_integer(name, value(), 10, 10000000));
    } else if (name == "--scaling") {
      o.scaling = inline_value.value_or("");
      if (!o.scaling->empty()) check_regex(name, *o.scaling);
    } else if (name == "--list") {
      no_value();
      o.list = true;
    } else if (name == "--resume") {
      o.resume = value();
      if (o.resume.empty()) throw UsageError{"--resume: empty directory name"};
    } else if (name == "--no-table") {
      no_value();
      o.table = false;
    } else if (name == "--lava") {
      no_value();
      o.lava = true;
    } else if (name == "--help" || name == "-h") {
      o.help = true;
    } else if (name.rfind("-", 0) == 0) {
      throw UsageError{"unknown option '" + args[i] + "'"};
    } else {
      throw UsageError{"unexpected argument '" + args[i] + "'"};
    }
    given.push_back(name);
  }
  if (!o.resume.empty()) {
    for (const auto& g : given) {
      if (g != "--resume" && g != "--bin-dir" && g != "--no-table" && g != "--lava" && g != "--help")
        throw UsageError{g + " cannot be combined with --resume: the run keeps its recorded options"};
    }
  }
  auto was_given = [&](const char* opt) {
    for (const auto& g : given)
      if (g == opt) return true;
    return false;
  };
  if (o.quick) {
    // A check, not a measurement: a 1 ms-sample invocation still running
    // after 20 s is stuck, and waiting 60 s for each stuck one defeats it.
    if (!was_given("--reps")) o.reps = 2;
    if (!was_given("--timeout")) o.timeout_s = 20;
  }
  return o;
}

std::vector<std::string> extra_bench_args(const Options& o) {
  std::vector<std::string> a;
  a.push_back("--samples");
  a.push_back(std::to_string(o.samples ? *o.samples : kDefaultSamples));
  if (o.quick) {
    a.insert(a.end(), {"--min-sample-ms", "1", "--warmup-ms", "1"});
  }
  if (o.counters) a.push_back(o.counters->empty() ? "--counters" : "--counters=" + *o.counters);
  return a;
}

JsonValue options_to_json(const Options& o) {
  JsonValue j = JsonValue::object();
  j.set("bin_dir", JsonValue::string(o.bin_dir));
  j.set("reps", JsonValue::integer(o.reps));
  j.set("samples", o.samples ? JsonValue::integer(*o.samples) : JsonValue());
  j.set("quick", JsonValue::boolean(o.quick));
  j.set("counters", o.counters ? JsonValue::string(*o.counters) : JsonValue());
  j.set("only", o.only.empty() ? JsonValue() : JsonValue::string(o.only));
  j.set("skip", o.skip.empty() ? JsonValue() : JsonValue::string(o.skip));
  j.set("out", JsonValue::string(o.out));
  j.set("timeout_s", JsonValue::real(o.timeout_s));
  JsonValue extra = JsonValue::array();
  for (const auto& a : extra_bench_args(o)) extra.push(JsonValue::string(a));
  j.set("bench_args", extra);
  j.set("budget_s", o.budget_s ? JsonValue::real(*o.budget_s) : JsonValue());
  j.set("pin_cpu", o.pin ? JsonValue::integer(o.pin_cpu) : JsonValue());
  j.set("control_every", o.controls ? JsonValue::integer(o.control_every) : JsonValue());
  j.set("target_change", JsonValue::real(o.target_change));
  j.set("headline_reps", JsonValue::integer(o.headline_reps));
  j.set("label", o.label.empty() ? JsonValue() : JsonValue::string(o.label));
  j.set("profile", JsonValue::boolean(o.profile));
  j.set("profile_samples", JsonValue::integer(o.profile_samples));
  j.set("scaling", o.scaling ? JsonValue::string(*o.scaling) : JsonValue());
  return j;
}

void options_from_json(const JsonValue& j, Options& o) {
  if (!o.bin_dir_given) {
    if (auto s = j.get_string("bin_dir")) o.bin_dir = *s;
  }
  // The same bounds as on the command line: a hand-edited meta.json must not
  // wrap around in the cast.
  if (const JsonValue* v = j.find("reps"); v && v->as_int() && *v->as_int() >= 1 && *v->as_int() <= 100000)
    o.reps = static_cast<int>(*v->as_int());
  if (const JsonValue* v = j.find("samples"); v && v->as_int() && *v->as_int() >= 1 && *v->as_int() <= 1000000)
    o.samples = static_cast<int>(*v->as_int());
  if (const JsonValue* v = j.find("quick")) o.quick = v->as_bool();
  if (auto s = j.get_string("counters")) o.counters = *s;
  if (auto s = j.get_string("label")) o.label = *s;
  if (const JsonValue* v = j.find("profile")) o.profile = v->as_bool();
  if (const JsonValue* v = j.find("profile_samples"); v && v->as_int() && *v->as_int() >= 10 && *v->as_int() <= 10000000)
    o.profile_samples = static_cast<int>(*v->as_int());
  if (auto s = j.get_string("scaling")) o.scaling = *s;
  if (auto s = j.get_string("only")) o.only = *s;
  if (auto s = j.get_string("skip")) o.skip = *s;
  if (auto s = j.get_string("out")) o.out = *s;
  if (const JsonValue* v = j.find("timeout_s"); v && v->as_double() && *v->as_double() > 0)
    o.timeout_s = *v->as_double();
  if (const JsonValue* v = j.find("budget_s"); v && v->as_double() && *v->as_double() > 0)
    o.budget_s = *v->as_double();
  // Runs recorded before pinning and controls existed had neither.
  if (const JsonValue* v = j.find("pin_cpu"); v && v->as_int() && *v->as_int() >= 0 && *v->as_int() <= (1 << 20)) {
    o.pin = true;
    o.pin_cpu = static_cast<int>(*v->as_int());
  } else {
    o.pin = false;
  }
  // Runs recorded before --headline-reps existed gave every summary case 20.
  o.headline_reps = kHeadlineRepsBefore;
  if (const JsonValue* v = j.find("headline_reps"); v && v->as_int() && *v->as_int() >= 2 && *v->as_int() <= 60)
    o.headline_reps = static_cast<int>(*v->as_int());
  if (const JsonValue* v = j.find("control_every"); v && v->as_int() && *v->as_int() >= 1 && *v->as_int() <= 100000) {
    o.controls = true;
    o.control_every = static_cast<int>(*v->as_int());
  } else {
    o.controls = false;
  }
}

}  // namespace kbench::driver
