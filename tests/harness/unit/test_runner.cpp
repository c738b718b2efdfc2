// test_runner.cpp — the sampling loop, case selection, --list and exit codes,
// run in-process through kbench::run_main.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "bounded.hpp"
#include "harness/bench.hpp"
#include "harness/internal/runner.hpp"

namespace {

struct Counts {
  int setups = 0, teardowns = 0, before = 0, after = 0;
  std::uint64_t ops = 0;
  std::vector<std::uint64_t> run_iters;
  std::string size_seen;
  std::vector<std::string> events;
};
Counts g;

class Counting final : public kbench::Fixture {
 public:
  void setup(kbench::Context& ctx) override {
    ++g.setups;
    g.events.push_back("setup");
    if (ctx.params().count("size")) g.size_seen = ctx.param("size");
    if (ctx.params().count("probe")) ctx.set_probe_iters(ctx.param_u64("probe"));
  }
  void before_sample(std::uint64_t iters) override {
    ++g.before;
    g.events.push_back("before " + std::to_string(iters));
  }
  void run(std::uint64_t iters) override {
    g.run_iters.push_back(iters);
    g.events.push_back("run " + std::to_string(iters));
    for (std::uint64_t i = 0; i < iters; ++i) ++g.ops;
  }
  void after_sample() override {
    ++g.after;
    g.events.push_back("after");
  }
  void teardown() override {
    ++g.teardowns;
    g.events.push_back("teardown");
  }
};

class Streaming final : public kbench::Fixture {
 public:
  void setup(kbench::Context& ctx) override { ctx.set_bytes_per_op(4096); ctx.set_info("fs_type", "tmpfs"); }
  void run(std::uint64_t) override {}
};

std::vector<kbench::CaseSpec> specs() {
  return kbench::cases({
      {kbench::fixture<Counting>("count")},
      kbench::sweep(kbench::fixture<Counting>("sized").param("size", "1").param("mode", "a"), "size", {"1", "64"}),
      {kbench::fixture<Counting>("pair").two_party()},
      {kbench::fixture<Streaming>("stream").bandwidth()},
  });
}

struct Result {
  int code;
  std::vector<std::string> lines;  // stdout
  std::string err;                 // stderr
};

std::string slurp(FILE* f) {
  std::string s;
  std::rewind(f);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

Result run(std::vector<std::string> args, const std::vector<kbench::CaseSpec>& cases = specs(),
           const std::optional<kbench::Category>& category = std::nullopt) {
  g = Counts{};
  FILE* out = std::tmpfile();
  FILE* err = std::tmpfile();
  REQUIRE(out);
  REQUIRE(err);
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(fileno(err), 2);
  const int code = kbench::run_main("t_bench", cases, args, out, category);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  Result r{code, {}, slurp(err)};
  std::string text = slurp(out), line;
  for (char c : text) {
    if (c == '\n') {
      r.lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  std::fclose(out);
  std::fclose(err);
  return r;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("--iters 123 --samples 7 times exactly 7 x 123 operations after one probe op, one setup, one teardown") {
  const Result r = run({"count", "--iters", "123", "--samples", "7", "--run-id", "RID", "--rep", "3"});
  REQUIRE(r.code == 0);
  CHECK(g.ops == 1 + 7 * 123);
  CHECK(g.setups == 1);
  CHECK(g.teardowns == 1);
  CHECK(g.before == 1 + 7);
  CHECK(g.after == 1 + 7);
  std::vector<std::uint64_t> expect(8, 123);
  expect[0] = 1;  // the setup probe
  CHECK(g.run_iters == expect);
  REQUIRE(r.lines.size() == 7);
  for (std::size_t i = 0; i < r.lines.size(); ++i) {
    const std::string& l = r.lines[i];
    CHECK(has(l, "\"schema\":1,"));
    CHECK(has(l, "\"run_id\":\"RID\""));
    CHECK(has(l, "\"bench\":\"t_bench\""));
    CHECK(has(l, "\"variant\":\"count\""));
    CHECK(has(l, "\"params\":\"\""));
    CHECK(has(l, "\"case\":\"t_bench count\""));
    CHECK(has(l, "\"metric\":\"latency\",\"control\":false,"));
    CHECK(has(l, "\"rep_idx\":3,"));
    CHECK(has(l, "\"sample_idx\":" + std::to_string(i) + ","));
    CHECK(has(l, "\"iters\":123,"));
    CHECK(has(l, "\"placement\":\"unpinned\""));
    CHECK(has(l, "\"cpu\":null"));
    for (const char* k : {"elapsed_ns", "ns_per_op", "t_start_ns", "utime_ns", "stime_ns", "nvcsw", "nivcsw", "minflt", "majflt",
                        "run_delay_ns", "steal_ns", "migrations"})
      CHECK(has(l, std::string("\"") + k + "\":"));
    CHECK(has(l, "\"majflt\":"));
    CHECK(has(l, "\"partner_cpu_ns\":null,"));  // no partner process
    // The noise markers follow the rusage counts.
    CHECK(l.find("\"majflt\":") < l.find("\"run_delay_ns\":"));
    CHECK(l.find("\"run_delay_ns\":") < l.find("\"steal_ns\":"));
    CHECK(l.find("\"steal_ns\":") < l.find("\"migrations\":"));
    CHECK_FALSE(has(l, "bytes_per_op"));
    CHECK(l.front() == '{');
    CHECK(l.back() == '}');
  }
  CHECK(has(r.err, "t_bench count: median"));
  CHECK(has(r.err, "7 samples x 123 iters"));
}

TEST_CASE("warm-up in --iters mode only when asked for, in whole runs of K") {
  Result r = run({"count", "--iters", "5", "--samples", "2", "--warmup-ms", "1"});
  REQUIRE(r.code == 0);
  CHECK((g.ops - 1) % 5 == 0);  // 1: the setup probe
  CHECK(g.ops > 11);
  CHECK(g.before == g.after);
  CHECK(r.lines.size() == 2);
}

TEST_CASE("calibrated mode records one iteration count for every sample") {
  const Result r = run({"count", "--samples", "3", "--warmup-ms", "0", "--min-sample-ms", "1"});
  REQUIRE(r.code == 0);
  REQUIRE(r.lines.size() == 3);
  // The last three runs are the samples; all use the calibrated count.
  REQUIRE(g.run_iters.size() >= 4);
  const std::uint64_t n = g.run_iters.back();
  CHECK(n > 1);
  for (std::size_t i = g.run_iters.size() - 3; i < g.run_iters.size(); ++i) CHECK(g.run_iters[i] == n);
  for (const auto& l : r.lines) CHECK(has(l, "\"iters\":" + std::to_string(n) + ","));
}

TEST_CASE("parameters: defaults, overrides and canonical order") {
  Result r = run({"sized", "--iters", "1", "--samples", "1"});
  REQUIRE(r.code == 0);
  CHECK(g.size_seen == "1");
  CHECK(has(r.lines.at(0), "\"params\":\"mode=a,size=1\""));
  CHECK(has(r.lines.at(0), "\"case\":\"t_bench sized mode=a,size=1\""));
  r = run({"sized", "--param", "size=64", "--param", "mode=b", "--iters", "1", "--samples", "1"});
  REQUIRE(r.code == 0);
  CHECK(g.size_seen == "64");
  CHECK(has(r.lines.at(0), "\"params\":\"mode=b,size=64\""));
}

TEST_CASE("bandwidth samples carry bytes_per_op and info keys") {
  const Result r = run({"stream", "--iters", "2", "--samples", "1"});
  REQUIRE(r.code == 0);
  CHECK(has(r.lines.at(0), "\"metric\":\"bandwidth\""));
  CHECK(has(r.lines.at(0), "\"bytes_per_op\":4096,"));
  CHECK(has(r.lines.at(0), "\"fs_type\":\"tmpfs\""));
  CHECK(has(r.err, "t_bench stream: median "));
  CHECK(has(r.err, "B/s (10^"));   // which MB (or GB), on the line itself: decimal
  CHECK(has(r.err, " B/s), max "));
}

TEST_CASE("two-party placement is named from the CPUs") {
  Result r = run({"pair", "--iters", "1", "--samples", "1", "--cpu", "0", "--partner-cpu", "0"});
  REQUIRE(r.code == 0);
  CHECK(has(r.lines.at(0), "\"case\":\"t_bench pair @same\""));
  CHECK(has(r.lines.at(0), "\"cpu\":0,\"partner_cpu\":0,"));
  r = run({"pair", "--iters", "1", "--samples", "1"});
  REQUIRE(r.code == 0);
  CHECK(has(r.lines.at(0), "\"case\":\"t_bench pair @unpinned\""));
}

TEST_CASE("--list prints every case, two-party ones in three placements") {
  const Result r = run({"--list"});
  REQUIRE(r.code == 0);
  REQUIRE(r.lines.size() == 1 + 2 + 3 + 1);
  CHECK(has(r.lines[0], "\"case\":\"t_bench count\""));
  CHECK(has(r.lines[0], "\"args\":[\"count\"]"));
  CHECK(has(r.lines[1], "\"args\":[\"sized\",\"--param\",\"mode=a\",\"--param\",\"size=1\"]"));
  CHECK(has(r.lines[2], "\"case\":\"t_bench sized mode=a,size=64\""));
  CHECK(has(r.lines[3], "\"case\":\"t_bench pair @same\""));
  CHECK(has(r.lines[4], "\"case\":\"t_bench pair @cross\""));
  CHECK(has(r.lines[5], "\"case\":\"t_bench pair @unpinned\""));
  CHECK(has(r.lines[5], "\"args\":[\"pair\"]"));
  CHECK(has(r.lines[6], "\"metric\":\"bandwidth\""));
  CHECK(g.setups == 0);
}

TEST_CASE("a control case says so in --list and in every sample, other cases say false") {
  const std::vector<kbench::CaseSpec> s = {kbench::fixture<Counting>("ctl").control(),
                                           kbench::fixture<Counting>("plain")};
  Result r = run({"--list"}, s);
  REQUIRE(r.code == 0);
  REQUIRE(r.lines.size() == 2);
  CHECK(has(r.lines[0], "\"two_party\":false,\"control\":true,"));
  CHECK(has(r.lines[1], "\"two_party\":false,\"control\":false,"));
  r = run({"ctl", "--iters", "2", "--samples", "2"}, s);
  REQUIRE(r.code == 0);
  REQUIRE(r.lines.size() == 2);
  for (const auto& l : r.lines) CHECK(has(l, "\"metric\":\"latency\",\"control\":true,"));
  r = run({"plain", "--iters", "2", "--samples", "1"}, s);
  REQUIRE(r.code == 0);
  CHECK(has(r.lines.at(0), "\"control\":false,"));
}

TEST_CASE("usage errors exit 2 with one clear line and the usage") {
  struct Bad {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {{"count", "--bogus"}, "t_bench: unknown option '--bogus'"},
      {{"nosuch"}, "t_bench: unknown variant 'nosuch'"},
      {{}, "t_bench: missing variant"},
      {{"count", "--param", "size=1"}, "t_bench: unknown parameter 'size' for count (it takes none)"},
      {{"sized", "--param", "depth=1"}, "t_bench: unknown parameter 'depth' for sized (known: mode, size)"},
      {{"count", "--partner-cpu", "0"}, "t_bench: --partner-cpu: count has no partner process"},
      {{"count", "--samples", "x"}, "t_bench: bad value 'x' for --samples"},
  };
  for (const auto& b : bad) {
    const Result r = run(b.args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.rfind(b.message, 0) == 0);
    CHECK(has(r.err, "usage: t_bench [count|sized|pair|stream] [options]"));
    CHECK(r.lines.empty());
    CHECK(g.setups == 0);
  }
}

TEST_CASE("--help prints the usage and the cases on stdout, exit 0") {
  const Result r = run({"--help"});
  CHECK(r.code == 0);
  REQUIRE_FALSE(r.lines.empty());
  CHECK(r.lines[0] == "usage: t_bench [count|sized|pair|stream] [options]");
  CHECK(r.err.empty());
}

TEST_CASE("the harness runs the setup probe once, right after setup, inside before/after_sample") {
  Result r = run({"count", "--iters", "3", "--samples", "2"});
  REQUIRE(r.code == 0);
  CHECK(g.events == std::vector<std::string>{"setup", "before 1", "run 1", "after", "before 3", "run 3", "after",
                                             "before 3", "run 3", "after", "teardown"});
  CHECK(r.lines.size() == 2);  // the probe is no sample
  // In calibrated mode too: one probe of one op, then warm-up and calibration.
  r = run({"count", "--samples", "1", "--min-sample-ms", "1"});
  REQUIRE(r.code == 0);
  REQUIRE(g.events.size() > 4);
  CHECK(std::vector<std::string>(g.events.begin(), g.events.begin() + 4) ==
        std::vector<std::string>{"setup", "before 1", "run 1", "after"});
  // A fixture may ask for a longer probe (lat_ctx: one full round).
  const std::vector<kbench::CaseSpec> probed = {kbench::fixture<Counting>("p").param("probe", "5")};
  r = run({"p", "--iters", "2", "--samples", "1"}, probed);
  REQUIRE(r.code == 0);
  CHECK(g.run_iters == std::vector<std::uint64_t>{5, 2});
  CHECK(g.before == 2);
}

TEST_CASE("--list declares category, rank, direction, unit, summary and curve") {
  const auto curve = kbench::curve("chart_id", "A title", "size").log_y();
  const std::vector<kbench::CaseSpec> s = kbench::cases({
      {kbench::loop("null", [](std::uint64_t) {}).summary(kbench::column("null", 1))},
      kbench::sweep(kbench::fixture<Counting>("sized").param("mode", "a").curve(curve.panel("sized"))
                        .summary(kbench::column("small", 3).note("1 B").at("size", "1"))
                        .summary(kbench::column("pick", 2).pick("size", 64).at("mode", "a")),
                    "size", {"1", "64"}),
      {kbench::fixture<Counting>("pair").two_party().summary(kbench::column("pair", 4).minus("null"))},
      {kbench::fixture<Streaming>("stream").bandwidth().category(kbench::category("Elsewhere", 7))},
  });
  const Result r = run({"--list"}, s, kbench::category("Mine", 5).bench_rank(3));
  REQUIRE(r.code == 0);
  REQUIRE(r.lines.size() == 1 + 2 + 3 + 1);
  const std::string tail_null =
      "\"args\":[\"null\"],\"category\":\"Mine\",\"category_rank\":5,\"rank\":3000,\"direction\":\"lower\","
      "\"unit\":\"ns\",\"summary\":{\"column\":\"null\",\"note\":\"\",\"order\":1,\"combine\":\"one\","
      "\"placement\":null,\"minus\":null,\"size_param\":null,\"prefer\":null,\"per\":null},\"curve\":null}";
  CHECK(has(r.lines[0], tail_null));
  // A sweep copies summary and curve to every point; each point's column is
  // the first whose at() matches it (size=1: "small", size=64: "pick").
  for (int i : {1, 2}) {
    CHECK(has(r.lines[i], "\"rank\":300" + std::to_string(i) + ","));
    CHECK(has(r.lines[i], "\"curve\":{\"chart\":\"chart_id\",\"title\":\"A title\",\"panel\":\"sized\","
                          "\"x\":\"size\",\"log_y\":true,\"cache_lines\":false}}"));
  }
  CHECK(has(r.lines[1], "\"summary\":{\"column\":\"small\",\"note\":\"1 B\",\"order\":3,\"combine\":\"one\","));
  CHECK(has(r.lines[2], "\"summary\":{\"column\":\"pick\",\"note\":\"\",\"order\":2,\"combine\":\"pick\","
                        "\"placement\":null,\"minus\":null,\"size_param\":\"size\",\"prefer\":64,\"per\":null}"));
  // Every placement of a two-party case carries the declaration; @same fills the column.
  for (int i : {3, 4, 5}) {
    CHECK(has(r.lines[i], "\"rank\":3003,"));
    CHECK(has(r.lines[i], "\"summary\":{\"column\":\"pair\",\"note\":\"\",\"order\":4,\"combine\":\"minus\","
                          "\"placement\":\"same\",\"minus\":\"null\",\"size_param\":null,\"prefer\":null,\"per\":null}"));
  }
  // Its own category, the binary's bench rank; bandwidth is higher-is-better MB/s.
  CHECK(has(r.lines[6], "\"category\":\"Elsewhere\",\"category_rank\":7,\"rank\":3004,\"direction\":\"higher\","
                        "\"unit\":\"MB/s\",\"summary\":null,\"curve\":null}"));
}

TEST_CASE("a binary without a category lists its cases under Other") {
  const Result r = run({"--list"});
  REQUIRE(r.code == 0);
  for (std::size_t i = 0; i < r.lines.size(); ++i)
    CHECK(has(r.lines[i], "\"category\":\"Other\",\"category_rank\":1000,\"rank\":" +
                              std::to_string(999000 + (i < 3 ? i : i < 6 ? 3 : 4)) + ","));
}

TEST_CASE("a summary column that matches none of the cases fails --list (exit 1)") {
  const std::vector<kbench::CaseSpec> s = {
      kbench::fixture<Counting>("sized").param("size", "1").summary(kbench::column("typo", 1).at("size", "100"))};
  std::fflush(nullptr);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    FILE* out = fopen("/dev/null", "w");
    _exit(kbench::run_main("t_bench", s, {"--list"}, out));
  }
  int status = 0;
  REQUIRE(kbench_test::wait_child(child, &status));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
}
