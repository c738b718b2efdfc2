// test_schedule.cpp — kbench-run's plan (src/driver/schedule.cpp, plan.cpp):
// the per-rep shuffle is uniform, a budget round's shuffle is its own, and
// controls sit exactly every `control_every` cases. Pure functions of their
// inputs at fixed seeds: deterministic. (The driver's code, linked into the
// one Catch2 runner with the harness's.)
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "driver/discover.hpp"
#include "driver/json_value.hpp"
#include "driver/options.hpp"
#include "driver/plan.hpp"
#include "driver/results.hpp"
#include "driver/schedule.hpp"

using kbench::driver::first_pass;
using kbench::driver::Invocation;
using kbench::driver::rep_order;
using kbench::driver::round_plan;

TEST_CASE("rep_order: a permutation of 0..n-1, the same for the same seed and rep", "[schedule]") {
  for (std::size_t n : {0, 1, 2, 5, 17}) {
    auto o = rep_order(n, 42, 3);
    REQUIRE(o.size() == n);
    CHECK(o == rep_order(n, 42, 3));
    std::sort(o.begin(), o.end());
    for (std::size_t i = 0; i < n; ++i) CHECK(o[i] == i);
  }
}

// The 6 orders of 3 cases over 5000 reps (seed 1), by Pearson's chi-square
// against 1/6 each (5 degrees of freedom). Alpha 0.001: a uniform shuffle
// fails at a random seed once in 1000 (critical value 20.515). Against the
// textbook biased shuffle (swap each of the n places with any of the n, not
// of the i left: orders 4/27 or 5/27) the noncentrality is N/81 = 61.7, so
// the power is 0.9999 (Poisson mixture of central chi-squares; 200 000
// simulated multinomials agree); at N = 3600 it would be 0.994. The
// shuffle's other slips give more: bound n with n-1 swaps makes orders 1/9
// or 2/9 (noncentrality N/6), Sattolo's off-by-one only the 2 cycles.
TEST_CASE("rep_order: every order of 3 cases equally often (chi-square, power 0.9999 against the biased shuffle)",
          "[schedule]") {
  const int reps = 5000;
  std::map<std::vector<std::size_t>, int> count;
  for (int rep = 0; rep < reps; ++rep) ++count[rep_order(3, 1, rep)];
  REQUIRE(count.size() == 6);
  const double expected = reps / 6.0;
  double chi2 = 0;
  for (const auto& [order, n] : count) chi2 += (n - expected) * (n - expected) / expected;
  INFO("chi-square " << chi2);
  CHECK(chi2 < 20.515);
}

namespace {

std::vector<std::size_t> cases_of(const std::vector<Invocation>& plan, int group) {
  std::vector<std::size_t> out;
  for (const auto& inv : plan)
    if (!inv.control && inv.group == group) out.push_back(inv.case_index);
  return out;
}

std::string shape(const std::vector<Invocation>& plan) {
  std::string s;
  for (const auto& inv : plan) s += inv.control ? 'C' : 'm';
  return s;
}

}  // namespace

// A round's stream must not be a first-pass rep's: round r ordered as rep r
// would line the two up. Over 40 seeds x 3 rounds, 6 cases (720 orders), a
// round equals rep r's order by chance 1 in 720 (0.17 expected in 120).
TEST_CASE("round_plan: a budget round's order is not the first-pass rep's of the same number", "[plan]") {
  const std::vector<std::size_t> measured{10, 11, 12, 13, 14, 15};
  const std::vector<int> next_rep(measured.size(), 9);
  int same = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const auto pass = first_pass(measured, {}, 4, seed, 0);
    for (int round = 1; round <= 3; ++round) {
      const auto r = round_plan(measured, next_rep, {}, seed, round, 0, 0);
      REQUIRE(cases_of(r, round).size() == measured.size());
      same += cases_of(r, round) == cases_of(pass, round);
    }
  }
  CHECK(same <= 2);
}

TEST_CASE("first_pass: a control before every block of control_every cases and after the last", "[plan]") {
  const std::vector<std::size_t> measured{0, 1, 2, 3, 4, 5, 6};
  const std::vector<std::size_t> controls{100, 101};
  CHECK(shape(first_pass(measured, controls, 1, 5, 3)) == "CmmmCmmmCmC");
  CHECK(shape(first_pass(measured, controls, 1, 5, 2)) == "CmmCmmCmmCmC");
  CHECK(shape(first_pass(measured, controls, 1, 5, 1)) == "CmCmCmCmCmCmCmC");
  CHECK(shape(first_pass(measured, controls, 1, 5, 7)) == "CmmmmmmmC");
  CHECK(shape(first_pass(measured, controls, 1, 5, 10)) == "CmmmmmmmC");
  CHECK(shape(first_pass(measured, controls, 1, 5, 0)) == "mmmmmmm");
  CHECK(shape(first_pass(measured, {}, 1, 5, 3)) == "mmmmmmm");
  CHECK(kbench::driver::control_slots_per_rep(7, 3) == 4);
  CHECK(kbench::driver::control_slots_per_rep(7, 2) == 5);
  // two reps: the controls cycle through the list, slots numbered on across reps
  const auto two = first_pass(measured, controls, 2, 5, 3);
  CHECK(shape(two) == "CmmmCmmmCmCCmmmCmmmCmC");
  std::vector<int> slots;
  std::vector<std::size_t> which;
  for (const auto& inv : two)
    if (inv.control) {
      slots.push_back(inv.rep);
      which.push_back(inv.case_index);
    }
  CHECK(slots == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(which == std::vector<std::size_t>{100, 101, 100, 101, 100, 101, 100, 101});
}

namespace {

// A case with n rep values alternating 100 / 150 (it can never detect 3%:
// it wants reps) or all 100 (precise), each rep costing `cost` seconds.
kbench::driver::CaseSoFar so_far(int n, bool noisy, double cost) {
  kbench::driver::CaseSoFar c;
  for (int r = 0; r < n; ++r) c.rep_values.push_back(noisy && r % 2 ? 150.0 : 100.0);
  c.invocations = n;
  c.seconds = cost * n;
  return c;
}

}  // namespace

TEST_CASE("plan_reps: the time goes by gain per second, a cheap case gets more reps", "[plan]") {
  using kbench::driver::plan_reps;
  // Two noisy cases of 5 reps, one 4 times dearer; 0.8 s to spend.
  const std::vector<kbench::driver::CaseSoFar> cases{so_far(5, true, 0.01), so_far(5, true, 0.04)};
  const auto plan = plan_reps(cases, 0.03, 0.8, 60);
  REQUIRE(plan.size() == 2);
  const double used = plan[0] * 0.01 + plan[1] * 0.04;
  INFO("cheap +" << plan[0] << ", dear +" << plan[1] << ", " << used << " s");
  CHECK(used <= 0.8 + 1e-9);
  CHECK(used > 0.8 - 0.04);  // filled: not even the dear case's rep is left over
  // log((n+1)/n) per second equal at the margin: about n proportional to 1/cost
  const double ratio = (5.0 + plan[0]) / (5.0 + plan[1]);
  CHECK(ratio > 3.0);
  CHECK(ratio < 5.0);
  CHECK(plan[0] <= 55);  // never past 60 reps
}

TEST_CASE("plan_reps: caps, precise cases to 10 reps, the unusable none", "[plan]") {
  using kbench::driver::plan_reps;
  std::vector<kbench::driver::CaseSoFar> cases{so_far(5, true, 0.01), so_far(5, false, 0.01),
                                               so_far(10, false, 0.01), so_far(5, true, 0.01),
                                               so_far(1, true, 0.01), so_far(58, true, 0.01)};
  cases[3].usable = false;
  // Time enough for everything: the noisy case to 60 reps, the precise one
  // to 10, the one already at 10 none, the failed one and the one with one
  // rep (nothing to judge its spread by) none, the one at 58 two.
  CHECK(plan_reps(cases, 0.03, 100.0, 60) == std::vector<int>{55, 5, 0, 0, 0, 2});
  CHECK(plan_reps(cases, 0.03, 100.0, 30) == std::vector<int>{25, 5, 0, 0, 0, 0});
  // Nothing fits: one rep all the same, the best gain (fewest reps, cheapest).
  const std::vector<kbench::driver::CaseSoFar> two{so_far(8, true, 0.5), so_far(5, true, 0.5)};
  CHECK(plan_reps(two, 0.03, 0.1, 60) == std::vector<int>{0, 1});
  // No candidate at all.
  CHECK(plan_reps({so_far(10, false, 0.01)}, 0.03, 100.0, 60) == std::vector<int>{0});
}

TEST_CASE("plan_reps: a summary table's precise case to 20 reps, the others to 10", "[plan]") {
  using kbench::driver::plan_reps;
  std::vector<kbench::driver::CaseSoFar> cases{so_far(5, false, 0.01), so_far(5, false, 0.01),
                                               so_far(10, false, 0.01), so_far(25, false, 0.01)};
  cases[0].headline = cases[2].headline = cases[3].headline = true;
  // the headline ones to 20 (the one at 25 none), the other to 10
  CHECK(plan_reps(cases, 0.03, 100.0, 60) == std::vector<int>{15, 5, 10, 0});
  // never past max_reps
  CHECK(plan_reps(cases, 0.03, 100.0, 12) == std::vector<int>{7, 5, 2, 0});
}

TEST_CASE("plan_reps: a summary table's case gets its 20 reps first, however dear", "[plan]") {
  using kbench::driver::plan_reps;
  // A dear headline case (0.5 s a rep) and a cheap noisy one; 2 s to spend:
  // by gain per second the cheap one would take its 55 reps first.
  std::vector<kbench::driver::CaseSoFar> cases{so_far(5, false, 0.5), so_far(5, true, 0.01)};
  cases[0].headline = true;
  CHECK(plan_reps(cases, 0.03, 2.0, 60) == std::vector<int>{4, 0});
  // with time to spare, both: the headline case to 20, the noisy one to 60
  CHECK(plan_reps(cases, 0.03, 100.0, 60) == std::vector<int>{15, 55});
  // not a summary case: the cheap one first
  cases[0].headline = false;
  CHECK(plan_reps(cases, 0.03, 2.0, 60) == std::vector<int>{2, 55});
}

TEST_CASE("headline_floor: the first table up to --headline-reps while the reps take a second", "[plan]") {
  using kbench::driver::headline_floor;
  CHECK(headline_floor(20, 0.022, true) == 20);   // 20 however cheap
  CHECK(headline_floor(8, 0.5, true) == 8);       // below 20: as asked
  CHECK(headline_floor(8, 0.5, false) == 8);      // for every summary table
  CHECK(headline_floor(40, 0.022, true) == 40);   // a system call's rep: 45 fit in a second, capped at 40
  CHECK(headline_floor(40, 0.030, true) == 33);   // 1 / 0.030 = 33.3
  CHECK(headline_floor(40, 0.050, true) == 20);   // 20 fit: never below 20
  CHECK(headline_floor(40, 1.300, true) == 20);   // a dear case: 20 all the same
  CHECK(headline_floor(60, 0.010, true) == 60);
  CHECK(headline_floor(40, 0.022, false) == 20);  // another summary table: 20, however cheap
  CHECK(headline_floor(60, 0.010, false) == 20);
}

TEST_CASE("--headline-reps: 40 by default, 20 for a run recorded before it, else as recorded", "[plan]") {
  using kbench::driver::Options;
  CHECK(Options{}.headline_reps == 40);
  auto resumed = [](const char* meta_options) {
    Options o;
    kbench::driver::options_from_json(*kbench::driver::json_parse(meta_options), o);
    return o.headline_reps;
  };
  CHECK(resumed("{}") == 20);
  CHECK(resumed("{\"headline_reps\":33}") == 33);
  CHECK(resumed("{\"headline_reps\":61}") == 20);  // out of bounds: as if not recorded
}

TEST_CASE("plan_reps: --headline-reps gives the first table's cheap case more reps first, a dear one 20",
          "[plan]") {
  using kbench::driver::plan_reps;
  // precise cases: the first table's cheap one (22 ms) and dear one (0.2 s), a cheap other one
  std::vector<kbench::driver::CaseSoFar> cases{so_far(5, false, 0.022), so_far(5, false, 0.2),
                                               so_far(5, false, 0.022)};
  cases[0].headline = cases[1].headline = true;
  cases[0].first_table = cases[1].first_table = true;
  CHECK(plan_reps(cases, 0.03, 100.0, 60, 40) == std::vector<int>{35, 15, 5});
  CHECK(plan_reps(cases, 0.03, 100.0, 60, 20) == std::vector<int>{15, 15, 5});
  CHECK(plan_reps(cases, 0.03, 100.0, 30, 40) == std::vector<int>{25, 15, 5});  // never past max_reps
  // first: 0.78 s holds the cheap headline case's 35 reps (0.77 s) and nothing more
  CHECK(plan_reps(cases, 0.03, 0.78, 60, 40) == std::vector<int>{35, 0, 0});
  // and a second more the dear one's 5 besides (1.77 s), the other case's reps after them
  const auto more = plan_reps(cases, 0.03, 1.78, 60, 40);
  CHECK(more[0] == 35);
  CHECK(more[1] == 5);
  CHECK(more[2] == 0);
  // the cheap case in another summary table: 20, as the dear one
  cases[0].first_table = false;
  CHECK(plan_reps(cases, 0.03, 100.0, 60, 40) == std::vector<int>{15, 15, 5});
}

TEST_CASE("read_so_far: a summary table's case is headline, the lowest category_rank's the first table",
          "[plan]") {
  using kbench::driver::Case;
  auto decl = [](const std::string& name, int rank, bool summary) {
    Case c;
    c.name = name;
    c.declaration = "{\"case\":\"" + name + "\",\"category_rank\":" + std::to_string(rank) +
                    ",\"summary\":" + (summary ? "{\"column\":\"x\",\"order\":1}" : "null") + "}";
    return c;
  };
  // In --list order: the first table need not come first, nor rank 10 exist.
  const std::vector<Case> cases{decl("bw", 50, true), decl("ctx", 20, true), decl("null", 20, true),
                                decl("fstat", 10, false), decl("ctl", 90, false)};
  const auto sf = kbench::driver::read_so_far("/nonexistent/runs.jsonl", "/nonexistent/samples.jsonl", cases);
  REQUIRE(sf.cases.size() == 5);
  std::vector<bool> headline, first;
  for (const auto& c : sf.cases) {
    headline.push_back(c.headline);
    first.push_back(c.first_table);
  }
  CHECK(headline == std::vector<bool>{true, true, true, false, false});
  // rank 10 has no summary column: the first table is rank 20's
  CHECK(first == std::vector<bool>{false, true, true, false, false});
}

TEST_CASE("choose_round: a share of the plan per round, a case once per rep", "[plan]") {
  using kbench::driver::choose_round;
  const std::vector<kbench::driver::CaseSoFar> cases{so_far(5, false, 0.01), so_far(10, false, 0.01),
                                                     so_far(55, true, 0.01)};
  // plan: 5, 0, 5 reps; a third of each now, rounded up
  CHECK(choose_round(cases, 0.03, 100.0, 60, 3) == std::vector<std::size_t>{0, 0, 2, 2});
  CHECK(choose_round(cases, 0.03, 100.0, 60, 1) == std::vector<std::size_t>{0, 0, 0, 0, 0, 2, 2, 2, 2, 2});
  CHECK(choose_round({so_far(10, false, 0.01)}, 0.03, 100.0, 60, 3).empty());
}
