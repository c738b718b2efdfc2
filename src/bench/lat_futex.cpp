// lat_futex — FUTEX_WAIT/FUTEX_WAKE ping-pong, the primitive under every
// modern lock and condition variable (lmbench has no equivalent).
//
// One op    = one round trip on a shared 32-bit word: this side makes it odd
//             and calls FUTEX_WAKE; the partner, sleeping in FUTEX_WAIT on
//             the old value, wakes, makes it even again and calls
//             FUTEX_WAKE; this side, sleeping in FUTEX_WAIT, wakes. Each
//             side always calls FUTEX_WAKE (no waiter bookkeeping) and calls
//             FUTEX_WAIT only while the word still holds the value it saw,
//             so an op is 2 wakes and at most 2 waits (fewer when the other
//             side is already done, e.g. spinning through on another CPU).
// Variants  = thread: a second thread of this process, FUTEX_PRIVATE_FLAG.
//             process: a forked partner, the word in a MAP_SHARED page,
//             shared (non-private) futexes: the kernel hashes the page, not
//             the address space.
// Timed     = run() only; mapping, thread/process creation and the graceful
//             end are setup/teardown. The setup probe is one round trip.
// Placement = this thread on --cpu, the partner thread or process on
//             --partner-cpu (the thread pins itself; without --partner-cpu
//             it is unpinned like a partner process).
// Kernels   = without futexes (CONFIG_FUTEX=n: ENOSYS) both variants exit
//             77, found by one FUTEX_WAKE of the flavour they use (private
//             or shared) in setup, before any partner exists.
// Caveats   = on one CPU an op is two switches; across CPUs two wake-ups,
//             slow and erratic in VMs. In --iters mode the partner reports
//             the round trips it served (timed ops + the setup probe).
#include <atomic>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

#include "harness/bench.hpp"

namespace {

using kbench::check;

struct Shared {
  std::atomic<std::uint32_t> seq;
  std::atomic<std::uint32_t> quit;
};
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "futex word must be 32 bits");

class PingPong final : public kbench::Fixture {
 public:
  explicit PingPong(bool process) : process_(process), op_flags_(process ? 0 : FUTEX_PRIVATE_FLAG) {}

  void setup(kbench::Context& ctx) override {
    void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) kbench::die_errno("mmap", errno);
    shared_ = new (p) Shared;
    shared_->seq.store(0);
    shared_->quit.store(0);
    // This flavour of futex in this kernel? A wake with no waiter is a no-op.
    const long rc = kbench::simulated_missing("futex")
                        ? (errno = ENOSYS, -1)
                        : ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&shared_->seq), FUTEX_WAKE | op_flags_,
                                    1, nullptr, nullptr, 0);
    if (rc < 0 && errno == ENOSYS)
      kbench::skip(std::string("futex is not in this kernel (") + (process_ ? "shared" : "private") +
                   " FUTEX_WAKE: ENOSYS; CONFIG_FUTEX=n)");
    check(rc, "futex wake");
    if (process_) {
      partner_ = kbench::spawn_partner(ctx, [&] {
        serve(ctx);
        _exit(0);
      });
    } else {
      thread_ = std::thread([this, &ctx] {
        kbench::pin_as_partner(ctx);
        serve(ctx);
      });
    }
  }

  void run(std::uint64_t iters) override {
    std::atomic<std::uint32_t>& seq = shared_->seq;
    std::uint32_t v = mine_;
    while (iters--) {
      const std::uint32_t odd = v + 1;
      seq.store(odd, std::memory_order_release);
      wake(seq);
      while ((v = seq.load(std::memory_order_acquire)) == odd) wait(seq, odd);
    }
    mine_ = v;
  }

  void teardown() override {
    shared_->quit.store(1, std::memory_order_release);
    shared_->seq.store(mine_ + 1, std::memory_order_release);
    wake(shared_->seq);
    if (process_) {
      kbench::wait_partner(partner_);
    } else {
      thread_.join();
    }
    check(::munmap(shared_, 4096), "munmap");
  }

 private:
  void wake(std::atomic<std::uint32_t>& w) {
    check(::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w), FUTEX_WAKE | op_flags_, 1, nullptr, nullptr, 0),
          "futex wake");
  }
  void wait(std::atomic<std::uint32_t>& w, std::uint32_t val) {
    if (::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w), FUTEX_WAIT | op_flags_, val, nullptr, nullptr, 0) != 0 &&
        errno != EAGAIN && errno != EINTR)
      kbench::die_errno("futex wait", errno);
  }

  // The partner's side: sleeps while the word is even (its turn is odd).
  void serve(const kbench::Context& ctx) {
    std::atomic<std::uint32_t>& seq = shared_->seq;
    // The word starts at 0; reading it here instead could see the first
    // ping already (odd) and wait for a change that never comes.
    std::uint32_t even = 0;
    std::uint64_t served = 0;
    for (;;) {
      std::uint32_t cur;
      while ((cur = seq.load(std::memory_order_acquire)) == even) wait(seq, even);
      if (shared_->quit.load(std::memory_order_acquire)) break;
      even = cur + 1;
      seq.store(even, std::memory_order_release);
      wake(seq);
      ++served;
    }
    kbench::report_count(ctx, "partner served", served, "operations");
  }

  bool process_;
  int op_flags_;
  Shared* shared_ = nullptr;
  std::uint32_t mine_ = 0;
  kbench::Partner partner_;
  std::thread thread_;
};

}  // namespace

KBENCH_MAIN("lat_futex", kbench::category("Local communication latency", 30).bench_rank(11),
            {kbench::fixture<PingPong>("thread", false).two_party().summary(kbench::column("futex", 6).note("threads, @same")),
             kbench::fixture<PingPong>("process", true).two_party()})
