// lat_ctx — context-switch time: P processes pass a token around a ring of
// pipes, each touching a private working set of S KB per switch.
//
// One op    = ring: one hop. The process holding the token sums its own
//             `size_kb` KB array, writes the token (8 bytes) into the next
//             process's pipe and blocks reading its own; the next process
//             wakes up and reads it. iters = hops; the time is reported per
//             hop, raw: the working-set cost is NOT subtracted.
//             work: the same per-hop summing of one of P arrays of S KB
//             (round robin), in one process, without any switch: the
//             working-set cost alone.
//             overhead: everything a hop does but the switch, in one
//             process: sum one of P arrays of S KB (round robin), write the
//             token into one of P pipes and read it back from that pipe
//             (it is there: the read never blocks). As lmbench does, the
//             summary's context switch is ring - overhead; `ring` itself is
//             the raw hop.
// Timed     = run() only; pipes, fork() and the first touch of every array
//             (by the process that owns it, after fork, so no page is shared
//             copy-on-write) are setup. The token carries the number of hops
//             still to do; the process that makes the last hop of a sample
//             sends the token straight back to this (timing) process instead
//             of to its ring successor, so a sample is exactly `iters` hops.
//             (When that last sender is this process itself, i.e. iters % P
//             == 1, the last hop is a write and read of its own pipe, without
//             a switch: at most one such hop per sample.)
// Placement = ring: process 0 (timing) on --cpu; the P-1 partners on
//             --partner-cpu, except that with different CPUs (@cross) the
//             even-numbered partners go on --cpu, so the ring alternates
//             between the two CPUs and every hop is a cross-CPU wake-up
//             (for even P). work: one process, unpinned unless --cpu.
// Caveats   = as in lmbench, with P processes all on one CPU the hop time
//             includes the caches and TLB refilled after each switch, so it
//             grows with P*S beyond the cache size. In --iters mode every
//             process reports "lat_ctx: process I passed the token N times";
//             the sum is the hops of the timed samples plus the setup probe
//             (set to one full round, P hops).
#include <fcntl.h>
#include <unistd.h>
#include <vector>

#include "harness/bench.hpp"
#include "harness/ipc.hpp"
#include "harness/memory.hpp"

namespace {

using kbench::check;

constexpr std::uint64_t kQuit = ~0ull;

// A private array of `kb` KB; sum() reads every word of it.
class WorkingSet {
 public:
  explicit WorkingSet(std::uint64_t kb) : words_(kb * 1024 / sizeof(std::uint64_t)) {
    for (std::size_t i = 0; i < words_.size(); ++i) words_[i] = i;  // private pages, faulted in now
  }
  void sum() const { kbench::do_not_optimize(kbench::sum_words(words_.data(), words_.size() * sizeof(words_[0]))); }

 private:
  std::vector<std::uint64_t> words_;
};

std::uint64_t procs_param(const kbench::Context& ctx) { return ctx.param_u64("procs", 2, 256); }
std::uint64_t size_param(const kbench::Context& ctx) { return ctx.param_u64("size_kb", 0, 1048576); }

class Ring final : public kbench::Fixture {
 public:
  void setup(kbench::Context& ctx) override {
    procs_ = static_cast<int>(procs_param(ctx));
    const std::uint64_t kb = size_param(ctx);
    pipes_.resize(static_cast<std::size_t>(procs_));
    for (auto& p : pipes_) check(::pipe2(p.fd, O_CLOEXEC), "pipe");
    const bool cross = ctx.cpu() && ctx.partner_cpu() && *ctx.cpu() != *ctx.partner_cpu();
    for (int i = 1; i < procs_; ++i) {
      partners_.push_back(kbench::spawn_partner(ctx, [&, i] {
        if (cross && i % 2 == 0) kbench::pin_to_cpu(*ctx.cpu());
        member(ctx, i, kb);
      }));
    }
    keep_only(0);
    ws_ = std::make_unique<WorkingSet>(kb);
    ctx_ = &ctx;  // outlives the fixture (teardown included)
    ctx.set_probe_iters(static_cast<std::uint64_t>(procs_));  // the setup probe: one full round
  }
  void before_sample(std::uint64_t iters) override {
    // This process sends hops 1, P+1, 2P+1, ...: counted here, not in run().
    passed_ += (iters - 1) / static_cast<std::uint64_t>(procs_) + 1;
  }
  void run(std::uint64_t iters) override {
    std::uint64_t r = iters;
    for (;;) {
      ws_->sum();
      --r;
      kbench::write_exact(r == 0 ? home_ : next_, &r, sizeof r);
      kbench::read_exact(in_, &r, sizeof r);
      if (r == 0) return;
    }
  }
  void teardown() override {
    kbench::ipc::send_u64(next_, kQuit);
    if (kbench::ipc::recv_u64(in_) != kQuit) kbench::die("ring: the quit token did not come back");
    for (auto& p : partners_) kbench::wait_partner(p);
    kbench::report_count(*ctx_, "process 0 passed the token", passed_, "times");
    for (int fd : {in_, next_, home_}) check(::close(fd), "close");
  }

 private:
  struct Pipe {
    int fd[2];
  };

  // Process i reads pipes_[i] and writes pipes_[i+1] (pipes_[0] is the
  // timing process's, also written by whoever makes a sample's last hop).
  void keep_only(int i) {
    in_ = pipes_[static_cast<std::size_t>(i)].fd[0];
    next_ = pipes_[static_cast<std::size_t>((i + 1) % procs_)].fd[1];
    home_ = pipes_[0].fd[1];
    for (auto& p : pipes_)
      for (int fd : p.fd)
        if (fd != in_ && fd != next_ && fd != home_) check(::close(fd), "close");
  }

  [[noreturn]] void member(const kbench::Context& ctx, int i, std::uint64_t kb) {
    keep_only(i);
    const WorkingSet ws(kb);
    std::uint64_t passed = 0, r;
    for (;;) {
      kbench::read_exact(in_, &r, sizeof r);
      if (r == kQuit) break;
      ws.sum();
      --r;
      ++passed;
      kbench::write_exact(r == 0 ? home_ : next_, &r, sizeof r);
    }
    kbench::write_exact(next_, &r, sizeof r);  // pass the quit token on
    kbench::report_count(ctx, "process " + std::to_string(i) + " passed the token", passed, "times");
    _exit(0);
  }

  int procs_ = 2;
  std::vector<Pipe> pipes_;
  std::vector<kbench::Partner> partners_;
  int in_ = -1, next_ = -1, home_ = -1;
  std::unique_ptr<WorkingSet> ws_;
  std::uint64_t passed_ = 0;
  const kbench::Context* ctx_ = nullptr;
};

class Work final : public kbench::Fixture {
 public:
  void setup(kbench::Context& ctx) override {
    const std::uint64_t procs = procs_param(ctx), kb = size_param(ctx);
    for (std::uint64_t i = 0; i < procs; ++i) sets_.emplace_back(kb);
    ctx.set_probe_iters(procs);
  }
  void run(std::uint64_t iters) override {
    std::size_t k = 0;
    const std::size_t n = sets_.size();
    while (iters--) {
      sets_[k].sum();
      if (++k == n) k = 0;
    }
  }

 private:
  std::vector<WorkingSet> sets_;
};

// A hop without the switch: the ring's sum, pipe write and pipe read, all
// in this process. P pipes and P arrays, used round robin, as the ring's P
// processes use theirs.
class Overhead final : public kbench::Fixture {
 public:
  void setup(kbench::Context& ctx) override {
    const std::uint64_t procs = procs_param(ctx), kb = size_param(ctx);
    for (std::uint64_t i = 0; i < procs; ++i) {
      sets_.emplace_back(kb);
      int fd[2];
      check(::pipe2(fd, O_CLOEXEC), "pipe");
      pipes_.push_back({fd[0], fd[1]});
    }
    ctx.set_probe_iters(procs);
  }
  void run(std::uint64_t iters) override {
    std::size_t k = 0;
    const std::size_t n = sets_.size();
    std::uint64_t r = iters;
    while (r) {
      sets_[k].sum();
      --r;
      kbench::write_exact(pipes_[k].wr, &r, sizeof r);
      kbench::read_exact(pipes_[k].rd, &r, sizeof r);
      if (++k == n) k = 0;
    }
  }
  void teardown() override {
    for (const auto& p : pipes_) {
      check(::close(p.rd), "close");
      check(::close(p.wr), "close");
    }
  }

 private:
  struct Ends {
    int rd, wr;
  };
  std::vector<WorkingSet> sets_;
  std::vector<Ends> pipes_;
};

// Every procs x size_kb.
std::vector<kbench::CaseSpec> grid(const kbench::CaseSpec& c) {
  return kbench::sweep(kbench::sweep(c, "procs", {"2", "4", "8", "16"}), "size_kb", {"0", "16", "64"});
}

// A summary column: the context switch at P processes and K KB ("Pp/KK"),
// ring - overhead (the raw hop is the ring case itself).
kbench::Column switch_cost(int order, const std::string& p, const std::string& kb) {
  return kbench::column(p + "p/" + kb + "K", order)
      .note("switch = ring - overhead, @same")
      .minus("overhead")
      .at("procs", p)
      .at("size_kb", kb);
}

}  // namespace

KBENCH_MAIN("lat_ctx", kbench::category("Context switching", 20).bench_rank(5),
            kbench::cases({grid(kbench::fixture<Ring>("ring").two_party().summary(switch_cost(1, "2", "0"))
                                    .summary(switch_cost(2, "2", "16")).summary(switch_cost(3, "2", "64"))
                                    .summary(switch_cost(4, "8", "16")).summary(switch_cost(5, "8", "64"))
                                    .summary(switch_cost(6, "16", "16")).summary(switch_cost(7, "16", "64"))),
                           grid(kbench::fixture<Work>("work")), grid(kbench::fixture<Overhead>("overhead"))}))
