// plan.cpp — the first pass, control slots and budget rounds (see plan.hpp).
#include "driver/plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include "driver/schedule.hpp"
#include "harness/internal/median.hpp"

namespace kbench::driver {

namespace {

// A round's shuffle must not repeat a first-pass rep's: its own stream.
constexpr int kRoundSeedOffset = 1000000;
constexpr int kMinSpread = 10;
// A summary table's case: at 10 reps the 20th percentile gives its lowest
// rep a fifth of its weight and its second a third, so one fast rep moves a
// headline number by a fifth of its distance; at 20 reps by a hundredth.
constexpr int kMinSpreadHeadline = 20;
// Past those 20, a case of the report's first summary table keeps its
// priority up to its headline_reps as long as its reps take a second in all:
// a cheap headline number (a system call: about 22 ms a rep) gets the reps
// that narrow its interval between runs, a dear one (50 ms a rep or more)
// does not eat the budget. The other tables stay at 20: with 140 cases
// behind them, their 40 reps would leave the rest of the suite at 5.
constexpr double kHeadlineSeconds = 1.0;

// Appends `order` (indexes into `items`) with a control before every block
// of `every` items and one after the last; slots numbered from `slot`.
void thread_controls(std::vector<Invocation>& out, const std::vector<Invocation>& items,
                     const std::vector<std::size_t>& controls, int every, int slot, int round, int group) {
  const bool with = !controls.empty() && every > 0;
  auto control = [&] {
    const std::size_t c = controls[static_cast<std::size_t>(slot) % controls.size()];
    out.push_back({c, slot, round, true, group});
    ++slot;
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (with && i % static_cast<std::size_t>(every) == 0) control();
    out.push_back(items[i]);
  }
  if (with) control();
}

// t(0.975) + t(0.80) for df degrees of freedom: the multiplier of a
// standard error that gives the change a test at 5% finds with 80% power.
double power_multiplier(double df) {
  static const double kDf[] = {1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30};
  static const double kMul[] = {14.08, 5.36, 4.16, 3.72, 3.49, 3.35, 3.20, 3.11, 3.00, 2.95, 2.90};
  constexpr std::size_t n = sizeof kDf / sizeof kDf[0];
  if (df <= kDf[0]) return kMul[0];
  for (std::size_t i = 1; i < n; ++i)
    if (df <= kDf[i]) return kMul[i - 1] + (kMul[i] - kMul[i - 1]) * (df - kDf[i - 1]) / (kDf[i] - kDf[i - 1]);
  return 2.80;
}

}  // namespace

int control_slots_per_rep(std::size_t n_measured, int control_every) {
  if (control_every <= 0) return 0;
  const std::size_t every = static_cast<std::size_t>(control_every);
  return static_cast<int>((n_measured + every - 1) / every) + 1;
}

std::vector<Invocation> first_pass(const std::vector<std::size_t>& measured,
                                   const std::vector<std::size_t>& controls, int reps,
                                   std::uint64_t seed, int control_every) {
  std::vector<Invocation> out;
  const int per_rep = controls.empty() ? 0 : control_slots_per_rep(measured.size(), control_every);
  for (int rep = 0; rep < reps; ++rep) {
    const auto order = rep_order(measured.size(), seed, rep);
    std::vector<Invocation> items;
    items.reserve(order.size());
    for (std::size_t i : order) items.push_back({measured[i], rep, 0, false, rep});
    thread_controls(out, items, controls, control_every, rep * per_rep, 0, rep);
  }
  return out;
}

std::vector<Invocation> round_plan(const std::vector<std::size_t>& chosen, const std::vector<int>& next_rep,
                                   const std::vector<std::size_t>& controls, std::uint64_t seed, int round,
                                   int control_every, int first_slot) {
  const auto order = rep_order(chosen.size(), seed, kRoundSeedOffset + round);
  std::vector<Invocation> items;
  items.reserve(order.size());
  for (std::size_t i : order) items.push_back({chosen[i], next_rep[i], round, false, round});
  std::vector<Invocation> out;
  thread_controls(out, items, controls, control_every, first_slot, round, round);
  return out;
}

double detectable_change(const std::vector<double>& rep_values) {
  std::vector<double> logs;
  for (double v : rep_values)
    if (v > 0 && std::isfinite(v)) logs.push_back(std::log(v));
  const std::size_t n = logs.size();
  if (n < 2) return std::numeric_limits<double>::infinity();
  const double med = median_of(logs);
  std::vector<double> dev;
  double mean = 0;
  for (double x : logs) {
    dev.push_back(std::fabs(x - med));
    mean += x;
  }
  mean /= double(n);
  double ss = 0;
  for (double x : logs) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / double(n - 1));
  const double s = std::max(1.4826 * median_of(dev), 0.5 * sd);
  // A low-quantile estimate rests on fewer reps than n: about (n-1)/2
  // degrees of freedom (the scripts' rule, approximated).
  const double df = std::max(1.0, (double(n) - 1.0) / 2.0);
  return std::expm1(power_multiplier(df) * std::sqrt(2.0) * s / std::sqrt(double(n)));
}

int headline_floor(int headline_reps, double rep_seconds, bool first_table) {
  if (headline_reps <= kMinSpreadHeadline) return headline_reps;
  if (!first_table) return kMinSpreadHeadline;
  const double affordable = rep_seconds > 0 ? std::floor(kHeadlineSeconds / rep_seconds) : headline_reps;
  return std::max(kMinSpreadHeadline, static_cast<int>(std::min<double>(headline_reps, affordable)));
}

std::vector<int> plan_reps(const std::vector<CaseSoFar>& cases, double target, double seconds, int max_reps,
                           int headline_reps) {
  // Each candidate's next rep, most gain per second first. The gain is the
  // share by which one more rep shrinks the variance of the mean of its rep
  // values, log((n+1)/n): the same for a wide case as for a narrow one, so
  // that reps do not pour into the widest cases (often wide because their
  // reps scatter with the file system or memory regimes, where a few more
  // reps change little) while cheap ones that could get precise wait. A
  // cheap case gets more reps than a dear one, until the two gain alike per
  // second; every case's interval narrows by about the same share per second
  // spent on it.
  // A summary table's case short of its headline_floor goes before every
  // other, however dear: the tables are what a reader reads first, and a
  // tight budget must not leave them on the reps of the first pass.
  struct Next {
    bool first;
    double gain;
    std::size_t index;
    bool operator<(const Next& o) const {
      if (first != o.first) return !first;
      return gain < o.gain || (gain == o.gain && index > o.index);
    }
  };
  std::vector<int> plan(cases.size(), 0);
  std::vector<int> cap(cases.size(), 0);
  std::vector<double> cost(cases.size(), 0.0);
  std::vector<int> first(cases.size(), 0);  // a headline case's reps before the others
  std::priority_queue<Next> queue;
  auto next = [&cost, &first](std::size_t i, int n) {
    return Next{n < first[i], std::log1p(1.0 / n) / cost[i], i};
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CaseSoFar& c = cases[i];
    const int n = static_cast<int>(c.rep_values.size());
    if (!c.usable || n < 2 || n >= max_reps || c.invocations == 0) continue;
    // Reps that look tight may all come from one stretch of the machine:
    // every case gets kMinSpread reps spread over the run before it counts
    // as precise.
    const bool wide = detectable_change(c.rep_values) > target;
    cost[i] = std::max(c.seconds / c.invocations, 1e-3);
    if (c.headline) first[i] = std::min(headline_floor(headline_reps, cost[i], c.first_table), max_reps);
    const int spread = c.headline ? first[i] : std::min(kMinSpread, max_reps);
    if (!wide && n >= spread) continue;
    cap[i] = (wide ? max_reps : spread) - n;
    queue.push(next(i, n));
  }
  double used = 0;
  bool any = false;
  while (!queue.empty()) {
    const std::size_t i = queue.top().index;
    queue.pop();
    if (any && used + cost[i] > seconds) continue;  // this case no more; a cheaper one may still fit
    any = true;
    used += cost[i];
    const int n = static_cast<int>(cases[i].rep_values.size()) + ++plan[i];
    if (plan[i] < cap[i]) queue.push(next(i, n));
  }
  return plan;
}

std::vector<std::size_t> choose_round(const std::vector<CaseSoFar>& cases, double target, double seconds,
                                      int max_reps, int parts, int headline_reps) {
  const std::vector<int> plan = plan_reps(cases, target, seconds, max_reps, headline_reps);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const int take = (plan[i] + std::max(parts, 1) - 1) / std::max(parts, 1);
    out.insert(out.end(), static_cast<std::size_t>(take), i);
  }
  return out;
}

}  // namespace kbench::driver
