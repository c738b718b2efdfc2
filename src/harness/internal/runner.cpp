// runner.cpp — bench_main: options, case selection, the sampling loop, output.
//
// The order of a case: pin, setup, the setup probe, warm-up, calibration,
// samples, teardown.
// Each sample is one timed run(iters) between two monotonic-clock reads;
// rusage snapshots and the noise markers (run-queue delay, steal,
// migrations) are taken just outside that window. Every sample line is
// flushed as soon as it is written, so an interrupted run keeps its samples.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <set>

#include "harness/bench.hpp"
#include "harness/internal/affinity.hpp"
#include "harness/internal/calibrate.hpp"
#include "harness/internal/cases.hpp"
#include "harness/internal/cleanup.hpp"
#include "harness/internal/copies.hpp"
#include "harness/internal/counters.hpp"
#include "harness/internal/human.hpp"
#include "harness/internal/json.hpp"
#include "harness/internal/noise.hpp"
#include "harness/internal/options.hpp"
#include "harness/internal/runner.hpp"
#include "harness/internal/rusage.hpp"

#ifndef KBENCH_VERSION
#define KBENCH_VERSION "unknown"
#endif

namespace kbench {

namespace {

constexpr int kSchema = 1;

std::vector<std::string> variant_names(const std::vector<CaseSpec>& specs) {
  std::vector<std::string> v;
  for (const auto& s : specs)
    if (std::find(v.begin(), v.end(), s.variant) == v.end()) v.push_back(s.variant);
  return v;
}

int usage_error(const char* name, const std::vector<CaseSpec>& specs, const std::string& msg) {
  std::fprintf(stderr, "%s: %s\n%s", name, msg.c_str(), usage_text(name, variant_names(specs)).c_str());
  return kExitUsage;
}

// --help: the usage text, then every case indented.
int print_help(FILE* out, const char* name, const std::optional<Category>& category,
               const std::vector<CaseSpec>& specs) {
  std::fprintf(out, "%s", usage_text(name, variant_names(specs)).c_str());
  std::fprintf(out, "\nCases (--list for all default parameters):\n");
  for (const auto& line : list_lines(name, category, specs, allowed_cpus()))
    std::fprintf(out, "  %s\n", line.c_str());
  return kExitOk;
}

// --list: one JSON line per case.
int print_list(FILE* out, const char* name, const std::optional<Category>& category,
               const std::vector<CaseSpec>& specs) {
  for (const auto& line : list_lines(name, category, specs, allowed_cpus())) std::fprintf(out, "%s\n", line.c_str());
  std::fflush(out);
  return kExitOk;
}

// The case the command line asks for, resolved against the declarations.
struct Selected {
  const CaseSpec* spec = nullptr;  // the variant's first declaration: its defaults
  std::string variant;
  Params params;                    // the defaults with --param applied
  std::vector<std::string> counters;
  std::string placement, case_id, params_str;
};

// The variant's first spec gives the defaults; --param may set any key that
// some spec of this variant declares. Throws UsageError.
Selected select_case(const char* name, const std::vector<CaseSpec>& specs, const Options& opt) {
  Selected sel;
  sel.variant = opt.variant;
  if (sel.variant.empty()) {
    const auto variants = variant_names(specs);
    if (variants.size() != 1) throw UsageError{"missing variant"};
    sel.variant = variants[0];
  }
  std::set<std::string> keys;
  for (const auto& s : specs) {
    if (s.variant != sel.variant) continue;
    if (!sel.spec) sel.spec = &s;
    for (const auto& kv : s.params) keys.insert(kv.first);
  }
  if (!sel.spec) throw UsageError{"unknown variant '" + sel.variant + "'"};
  sel.params = sel.spec->params;
  for (const auto& [k, v] : opt.params) {
    if (!keys.count(k)) {
      std::string known;
      for (const auto& kk : keys) known += (known.empty() ? "" : ", ") + kk;
      throw UsageError{"unknown parameter '" + k + "' for " + sel.variant +
                       (known.empty() ? " (it takes none)" : " (known: " + known + ")")};
    }
    sel.params[k] = v;
  }
  if (opt.counters) sel.counters = parse_counter_list(*opt.counters);
  if (!sel.spec->is_two_party && opt.partner_cpu)
    throw UsageError{"--partner-cpu: " + sel.variant + " has no partner process"};
  sel.placement = placement_name(sel.spec->is_two_party, opt.cpu, opt.partner_cpu);
  sel.case_id = case_name(name, sel.variant, sel.params, sel.spec->is_two_party, sel.placement);
  sel.params_str = canonical_params(sel.params);
  return sel;
}

struct Measured {
  std::uint64_t t_start_ns, elapsed_ns;
  Usage usage;
  std::vector<std::optional<std::int64_t>> counters;
  NoiseDelta noise;
};

// One timed run(iters) of the fixture with everything read around it. Used
// for warm-up and calibration as well as for the samples.
class Sampler {
 public:
  Sampler(Fixture& fixture, const Counters& counters, NoiseMarkers& noise)
      : fixture_(fixture), counters_(counters), noise_(noise) {}

  // With `sync` (--copies), the window opens when every copy is ready.
  Measured timed(std::uint64_t iters, CopySync* sync = nullptr, std::uint64_t sample_idx = 0) {
    fixture_.before_sample(iters);
    const auto partners = partner_pids();
    // Noise markers outside the perf counters, which must not count their
    // reads. Run delay sits inside the rusage snapshots: a preemption shows
    // up at the return of whichever system call it hits, and these reads
    // attract them, so with it outermost some samples reported a wait that
    // neither nivcsw nor the timed window saw. Nested this way, a wait in
    // run_delay_ns is also a switch in nvcsw/nivcsw. Steal and migrations,
    // the costlier reads, stay outermost, out of the rusage times.
    NoiseSnapshot n0, n1;
    noise_.read_steal_migrations(n0);
    const Usage u0 = usage_snapshot(partners);
    noise_.read_run_delay(n0);
    const auto c0 = counters_.read();
    if (sync) sync->start(sample_idx);
    const std::uint64_t t0 = now_ns();
    fixture_.run(iters);
    const std::uint64_t t1 = now_ns();
    const auto c1 = counters_.read();
    noise_.read_run_delay(n1);
    const Usage u1 = usage_snapshot(partners);
    noise_.read_steal_migrations(n1);
    fixture_.after_sample();
    std::vector<std::optional<std::int64_t>> deltas(c0.size());
    for (std::size_t i = 0; i < c0.size(); ++i)
      if (c0[i] && c1[i]) deltas[i] = counter_delta(*c0[i], *c1[i]);
    Usage used = u1 - u0;
    const OutsideUsage o = fixture_.outside_usage();
    used.utime_ns += o.utime_ns;
    used.stime_ns += o.stime_ns;
    used.nvcsw += o.nvcsw;
    used.nivcsw += o.nivcsw;
    used.minflt += o.minflt;
    used.majflt += o.majflt;
    return {t0, t1 - t0, used, deltas, noise_.delta(n0, n1)};
  }

 private:
  Fixture& fixture_;
  const Counters& counters_;
  NoiseMarkers& noise_;
};

// Runs the operation for --warmup-ms before measuring, doubling the count
// while a run is short. Off by default in --iters mode, so counts stay exact.
void warm_up(const Options& opt, Sampler& sampler) {
  const bool warm = opt.iters ? opt.warmup_given && opt.warmup_ms > 0 : opt.warmup_ms > 0;
  if (!warm) return;
  const std::uint64_t budget = opt.warmup_ms * 1000000ull;
  const std::uint64_t start = now_ns();
  std::uint64_t n = opt.iters.value_or(1);
  while (now_ns() - start < budget) {
    const Measured m = sampler.timed(n);
    if (!opt.iters && m.elapsed_ns < budget / 4 && n < (1ull << 40)) n *= 2;
  }
}

// The operations per sample: --iters, else calibrated to --min-sample-ms.
std::uint64_t sample_iters(const Options& opt, Sampler& sampler) {
  if (opt.iters) return *opt.iters;
  return calibrate([&](std::uint64_t n) { return sampler.timed(n).elapsed_ns; }, opt.min_sample_ms * 1000000ull);
}

// One sample as a JSON line (reference: formats.md).
std::string sample_line(const char* name, const Selected& sel, const Options& opt, const Context& ctx,
                        const Counters& counters, std::uint64_t sample_idx, std::uint64_t iters,
                        const Measured& m, double per_op, const CopySync* sync) {
  JsonObject o;
  o.add("schema", kSchema)
      .add("run_id", opt.run_id)
      .add("bench", name)
      .add("variant", sel.variant)
      .add("params", sel.params_str)
      .add("placement", sel.placement)
      .add("case", sel.case_id)
      .add("metric", metric_name(sel.spec->metric))
      .add("control", sel.spec->is_control && !sync)  // N copies trace no machine speed (reference: running.md, Scaling)
      .add("rep_idx", opt.rep)
      .add("sample_idx", sample_idx)
      .add("iters", iters)
      .add("elapsed_ns", m.elapsed_ns)
      .add("ns_per_op", per_op);
  if (sel.spec->metric == Metric::bandwidth) o.add("bytes_per_op", *ctx.bytes_per_op());
  o.add("cpu", opt.cpu)
      .add("partner_cpu", opt.partner_cpu)
      .add("t_start_ns", m.t_start_ns)
      .add("utime_ns", m.usage.utime_ns)
      .add("stime_ns", m.usage.stime_ns)
      .add("nvcsw", m.usage.nvcsw)
      .add("nivcsw", m.usage.nivcsw)
      .add("minflt", m.usage.minflt)
      .add("majflt", m.usage.majflt)
      .add("partner_cpu_ns", m.usage.partner_cpu_ns)
      .add("run_delay_ns", m.noise.run_delay_ns)
      .add("steal_ns", m.noise.steal_ns)
      .add("migrations", m.noise.migrations);
  if (sync) sync->add_keys(o);
  if (counters.active()) {
    o.add("counter_scope", counters.scope());
    for (std::size_t c = 0; c < counters.names().size(); ++c) o.add(counters.names()[c], m.counters[c]);
  }
  for (const auto& [k, v] : ctx.info()) o.add(k, v);
  for (const auto& [k, v] : ctx.info_int()) o.add(k, v);
  o.add("suite_version", KBENCH_VERSION);
  return o.str();
}

// The stderr line for people: median, min and spread of the time per
// operation in human units (or the bandwidth in decimal units, 1 MB = 10^6
// B, said on the line as in every table); see human.hpp.
void human_line(const std::string& case_id, const std::vector<double>& ns_per_op,
                std::uint64_t iters, std::optional<std::uint64_t> bytes_per_op) {
  std::fprintf(stderr, "%s\n", summary_line(case_id, ns_per_op, iters, bytes_per_op).c_str());
}

// setup(), then the setup probe (see Fixture): before_sample, run,
// after_sample with ctx.probe_iters(), untimed.
void set_up(Fixture& fixture, Context& ctx, const CaseSpec& spec) {
  fixture.setup(ctx);
  if (spec.metric == Metric::bandwidth && !ctx.bytes_per_op())
    die("internal error: bandwidth case did not set bytes_per_op");
  fixture.before_sample(ctx.probe_iters());
  fixture.run(ctx.probe_iters());
  fixture.after_sample();
}

// Pin, set up, warm up, calibrate, then --samples timed samples to `out`,
// each flushed as soon as it is written; teardown, the human line, cleanup.
// With `sync`, one copy of --copies: samples go to the coordinator.
int run_case(const char* name, const Selected& sel, const Options& opt, FILE* out, CopySync* sync = nullptr) {
  install_cleanup_handlers();
  // Checks both CPUs before any work: an absent CPU is a skip (77).
  if (opt.partner_cpu && !cpu_allowed(*opt.partner_cpu)) pin_to_cpu(*opt.partner_cpu);
  if (opt.cpu) pin_to_cpu(*opt.cpu);

  // Opened before setup so that partners forked there inherit them.
  Counters counters;
  counters.open(sel.counters);

  Context ctx(name, sel.variant, sel.params, opt.cpu, opt.partner_cpu, opt.iters.has_value());
  std::unique_ptr<Fixture> fixture = sel.spec->make();
  {
    // Thread copies set up one at a time (the registries are per process).
    static std::mutex setup_lock;
    std::unique_lock<std::mutex> lock(setup_lock, std::defer_lock);
    if (sync && sync->threads()) lock.lock();
    set_up(*fixture, ctx, *sel.spec);
  }
  // Opened after setup (and its probe), so partners forked there do not
  // inherit the fds (O_CLOEXEC keeps them from exec'd programs).
  NoiseMarkers noise(opt.cpu);
  Sampler sampler(*fixture, counters, noise);

  warm_up(opt, sampler);
  std::uint64_t iters = sample_iters(opt, sampler);
  if (sync) iters = sync->agree_iters(iters);
  std::vector<double> ns_per_op;
  for (std::uint64_t i = 0; i < opt.samples; ++i) {
    Measured m = sampler.timed(iters, sync, i);
    if (sync && sync->threads()) m.noise = NoiseDelta{};  // the /proc/self files: the main thread's
    const double per_op = static_cast<double>(m.elapsed_ns) / static_cast<double>(iters);
    ns_per_op.push_back(per_op);
    const std::string line = sample_line(name, sel, opt, ctx, counters, i, iters, m, per_op, sync);
    if (sync) {
      sync->emit(line, m.t_start_ns, m.elapsed_ns, iters);
      continue;
    }
    std::fprintf(out, "%s\n", line.c_str());
    if (std::fflush(out) != 0) die_errno("write samples", errno);
  }
  fixture->teardown();
  fixture.reset();
  human_line(sync ? sel.case_id + " copy " + std::to_string(sync->index()) + " (CPU " + std::to_string(sync->cpu()) + ")"
                  : sel.case_id,
             ns_per_op, iters,
             sel.spec->metric == Metric::bandwidth ? ctx.bytes_per_op() : std::nullopt);
  if (!(sync && sync->threads())) run_cleanup();  // thread copies: the coordinator's, at the end
  return kExitOk;
}

// --copies (copies.hpp): the case id gains " xN" (" threads xN"); each copy
// runs run_case pinned to its CPU, its partner on the same CPU (@same) or
// with --cross-pairs on the next one (@cross).
int run_copies_case(const char* name, Selected sel, const Options& opt, FILE* out) {
  const CopiesPlan plan = plan_copies(opt, sel.spec->is_two_party);
  sel.placement = !sel.spec->is_two_party ? "pinned" : plan.cross_pairs ? "cross" : "same";
  sel.case_id = case_name(name, sel.variant, sel.params, sel.spec->is_two_party, sel.placement) +
                (plan.threads ? " threads" : "") + " x" + std::to_string(plan.copies);
  return run_copies(plan, opt.samples, sel.case_id, out, [&](CopySync& copy) {
    Options o = opt;
    o.cpu = copy.cpu();
    if (sel.spec->is_two_party) o.partner_cpu = copy.partner_cpu();
    return run_case(name, sel, o, out, &copy);
  });
}

}  // namespace

int run_main(const char* name, const std::vector<CaseSpec>& specs, const std::vector<std::string>& args,
             FILE* out, const std::optional<Category>& category) {
  set_program_name(name);
  // Every usage error, of the options or of the case they select, is
  // caught here: the message and the usage text, exit 2. Nothing the run
  // itself does throws UsageError.
  try {
    const Options opt = parse_options(args);
    if (opt.help) return print_help(out, name, category, specs);
    if (opt.list) return print_list(out, name, category, specs);
    const Selected sel = select_case(name, specs, opt);
    if (opt.copies) return run_copies_case(name, sel, opt, out);
    return run_case(name, sel, opt, out);
  } catch (const UsageError& e) {
    return usage_error(name, specs, e.message);
  }
}

int bench_main(const char* name, std::vector<CaseSpec> specs, int argc, char** argv) {
  return run_main(name, specs, std::vector<std::string>(argv + 1, argv + argc), stdout);
}

int bench_main(const char* name, const Category& category, std::vector<CaseSpec> specs, int argc, char** argv) {
  return run_main(name, specs, std::vector<std::string>(argv + 1, argv + argc), stdout, category);
}

}  // namespace kbench
