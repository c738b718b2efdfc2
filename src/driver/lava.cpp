// lava.cpp — LAVA test results from a run's files (see lava.hpp).
#include "driver/lava.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "driver/results.hpp"
#include "driver/spawn.hpp"
#include "driver/table.hpp"

namespace kbench::driver {

namespace {

// A measurement LAVA reads as a decimal: six significant digits, never an
// exponent (a server may keep it as a fixed-point decimal).
std::string decimal_text(double v) {
  if (!std::isfinite(v)) return "";
  const int magnitude = v > 0 ? static_cast<int>(std::floor(std::log10(v))) : 0;
  const int decimals = std::min(9, std::max(0, 5 - magnitude));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// The executable NAME in a directory of $PATH, or "".
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  std::size_t pos = 0;
  while (pos <= dirs.size()) {
    std::size_t colon = dirs.find(':', pos);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string dir = dirs.substr(pos, colon - pos);
    const std::string file = (dir.empty() ? "." : dir) + "/" + name;
    if (access(file.c_str(), X_OK) == 0) return file;
    pos = colon + 1;
  }
  return "";
}

// One line, without what would end a signal early.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '<' || c == '>') c = ' ';
  return s;
}

class Reporter {
 public:
  explicit Reporter(std::FILE* out)
      : out_(out), test_case_(on_path("lava-test-case")), test_set_(on_path("lava-test-set")) {}

  void set_start(const std::string& name) {
    emit(test_set_, {"start", name}, "<LAVA_SIGNAL_TESTSET START " + name + ">");
  }
  void set_stop() { emit(test_set_, {"stop"}, "<LAVA_SIGNAL_TESTSET STOP>"); }

  void test_case(const LavaResult& r) {
    if (r.result != "pass")
      std::fprintf(out_, "kbench-run: lava: %s: %s: %s\n", r.id.c_str(), r.result.c_str(),
                   one_line(r.reason).c_str());
    std::vector<std::string> args{r.id, "--result", r.result};
    std::string signal = "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=" + r.id + " RESULT=" + r.result;
    if (!r.measurement.empty()) {
      args.insert(args.end(), {"--measurement", r.measurement, "--units", r.units});
      signal += " MEASUREMENT=" + r.measurement + " UNITS=" + r.units;
    }
    emit(test_case_, args, signal + ">");
  }

 private:
  // The helper when there is one, else (or when it fails) the signal itself.
  void emit(const std::string& helper, const std::vector<std::string>& args, const std::string& signal) {
    if (!helper.empty()) {
      std::vector<std::string> argv{helper};
      argv.insert(argv.end(), args.begin(), args.end());
      std::fflush(out_);
      const SpawnResult r = spawn_and_wait(argv, 30);
      std::fputs(r.out.c_str(), out_);
      if (r.exited && r.exit_code == 0) return;
      std::fprintf(stderr, "kbench-run: warning: %s failed (%s): the signal instead\n", helper.c_str(),
                   !r.started ? r.error.c_str()
                   : r.exited  ? ("exit " + std::to_string(r.exit_code)).c_str()
                               : "killed");
    }
    std::fprintf(out_, "%s\n", signal.c_str());
  }

  std::FILE* out_;
  const std::string test_case_, test_set_;
};

}  // namespace

std::string lava_name(const std::string& case_name) {
  std::string out;
  for (char c : case_name) {
    if (c == ' ' || c == ',') {
      if (!out.empty() && out.back() != '.') out += '.';
    } else if (c == '=') {
      out += '-';
    } else if (c == '@') {
      // "@same" -> "same": the dot before it comes from the space
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
               c == '-' || c == '+' || c == '.') {
      out += c;
    } else {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '.') out.pop_back();
  return out.empty() ? "case" : out;
}

std::vector<LavaResult> lava_results(const std::vector<Case>& cases, const std::vector<ListFailure>& list_failures,
                                     const std::string& runs_path, const std::string& samples_path) {
  std::map<std::string, std::string> reasons;
  const auto statuses = case_statuses(runs_path, &reasons);
  const auto estimates = case_estimates(samples_path);

  // One set per benchmark, in the order the benchmarks first appear.
  std::vector<std::string> benches;
  std::map<std::string, std::vector<const Case*>> by_bench;
  for (const auto& c : cases) {
    if (by_bench.find(c.bench) == by_bench.end()) benches.push_back(c.bench);
    by_bench[c.bench].push_back(&c);
  }
  std::vector<LavaResult> out;
  std::set<std::string> used;
  auto unique = [&](const std::string& id) {
    std::string u = id;
    for (int k = 2; used.count(u); ++k) u = id + "." + std::to_string(k);
    used.insert(u);
    return u;
  };
  for (const auto& bench : benches) {
    for (const Case* c : by_bench[bench]) {
      LavaResult r;
      r.id = unique(lava_name(c->name));
      r.set = lava_name(bench);
      auto st = statuses.find(c->name);
      auto why = reasons.find(c->name);
      const std::string reason = why == reasons.end() ? "" : bare_reason(why->second, c->bench);
      auto est = estimates.find(c->name);
      if (st == statuses.end()) {
        r.result = "fail";
        r.reason = "not run (the run was interrupted)";
      } else if (st->second == "skipped") {
        r.result = "skip";
        r.reason = reason.empty() ? "skipped" : reason;
      } else if (st->second != "ok") {
        // A failed, timed-out or crashed invocation: no number for that case.
        r.result = "fail";
        r.reason = reason.empty() ? st->second : reason;
      } else if (est == estimates.end()) {
        r.result = "fail";
        r.reason = "no valid samples";
      } else {
        r.result = "pass";
        r.measurement = decimal_text(est->second.value);
        r.units = est->second.unit();
      }
      out.push_back(r);
    }
  }
  for (const auto& f : list_failures) {
    LavaResult r;
    r.set = lava_name(f.binary);
    r.id = unique(r.set + ".list");
    r.result = f.status == "skipped" ? "skip" : "fail";
    r.reason = f.binary + " --list: " + f.status + (f.reason.empty() ? "" : ": " + f.reason);
    out.push_back(r);
  }
  return out;
}

int report_lava(const std::vector<LavaResult>& results, std::FILE* out) {
  Reporter rep(out);
  std::string open_set;
  bool in_set = false;
  for (const auto& r : results) {
    if (!in_set || r.set != open_set) {
      if (in_set) rep.set_stop();
      rep.set_start(r.set);
      open_set = r.set;
      in_set = true;
    }
    rep.test_case(r);
  }
  if (in_set) rep.set_stop();
  std::fflush(out);
  return static_cast<int>(results.size());
}

}  // namespace kbench::driver
