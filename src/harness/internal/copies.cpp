// copies.cpp — --copies: the plan, the barrier, the copies and the coordinator.
#include "harness/internal/copies.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cinttypes>
#include <csignal>
#include <cstring>
#include <ctime>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "harness/bench.hpp"
#include "harness/internal/affinity.hpp"
#include "harness/internal/cleanup.hpp"
#include "harness/internal/human.hpp"

namespace kbench {

namespace {

constexpr std::size_t kLineMax = 16384;
constexpr int kMaxCopies = 4096;

}  // namespace

// One sample line handed from a copy to the coordinator (a CopyShared slot;
// not in the anonymous namespace, as CopyShared, whose member it is, is not).
struct CopySlot {
  std::uint64_t t_start_ns, elapsed_ns, iters;
  std::uint32_t len;
  char line[kLineMax];
};

// One MAP_SHARED anonymous mapping, made before the copies are forked.
struct CopyShared {
  int copies;
  bool threads, oversubscribed;
  std::atomic<std::uint32_t> arrived;   // barrier: copies at the current generation
  std::atomic<std::uint32_t> gen;       // barrier generation (futex word)
  std::atomic<std::uint32_t> emitted;   // lines handed over, all samples (futex word)
  std::atomic<std::uint32_t> printed;   // samples written by the coordinator (futex word)
  std::atomic<std::uint64_t> iters_max;
  CopySlot slots[1];  // [copies]
};

namespace {

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t val, const timespec* timeout) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "futex word");
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, val, timeout, nullptr, 0);
}

void wake_all(std::atomic<std::uint32_t>* word) { futex(word, FUTEX_WAKE, INT_MAX, nullptr); }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Returns when `word` differs from `seen`: a short spin when every copy has
// a CPU of its own, then futex waits of at most `tick` (on_tick between).
template <typename Tick>
void wait_change(std::atomic<std::uint32_t>* word, std::uint32_t seen, bool spin, const Tick& on_tick) {
  if (spin) {
    const std::uint64_t until = now_ns() + 50000;
    for (unsigned i = 0;; ++i) {
      if (word->load(std::memory_order_acquire) != seen) return;
      cpu_relax();
      if ((i & 63) == 63 && now_ns() > until) break;
    }
  }
  const timespec tick = {0, 100000000};
  while (word->load(std::memory_order_acquire) == seen) {
    futex(word, FUTEX_WAIT, seen, &tick);
    on_tick();
  }
}

void no_tick() {}

// Every copy arrives; the last one opens the next generation.
void barrier(CopyShared& s) {
  const std::uint32_t g = s.gen.load(std::memory_order_acquire);
  if (s.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<std::uint32_t>(s.copies)) {
    s.arrived.store(0, std::memory_order_relaxed);
    s.gen.fetch_add(1, std::memory_order_release);
    wake_all(&s.gen);
    return;
  }
  wait_change(&s.gen, g, !s.oversubscribed, no_tick);
}

CopySlot& slot(CopyShared& s, int i) {
  return *reinterpret_cast<CopySlot*>(reinterpret_cast<char*>(&s.slots[0]) + sizeof(CopySlot) * static_cast<std::size_t>(i));
}

// The copies of this process (processes mode), for the cleanup hook.
pid_t g_copies[kMaxCopies];
int g_ncopies = 0;

// Run by run_cleanup in the coordinator (also from its signal handler):
// SIGTERM to every copy, so that each removes its own directories and
// partners, a bounded wait (5 s), then SIGKILL. Async-signal-safe.
void stop_copies() {
  for (int i = 0; i < g_ncopies; ++i)
    if (g_copies[i] > 0) kill(g_copies[i], SIGTERM);
  for (int tries = 0; tries < 5000; ++tries) {
    bool left = false;
    for (int i = 0; i < g_ncopies; ++i) {
      if (g_copies[i] <= 0) continue;
      const pid_t r = waitpid(g_copies[i], nullptr, WNOHANG);
      if (r == g_copies[i] || (r < 0 && errno == ECHILD)) g_copies[i] = 0;
      else left = true;
    }
    if (!left) return;
    const timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
  for (int i = 0; i < g_ncopies; ++i) {
    if (g_copies[i] <= 0) continue;
    kill(g_copies[i], SIGKILL);
    while (waitpid(g_copies[i], nullptr, 0) < 0 && errno == EINTR) {
    }
    g_copies[i] = 0;
  }
}

int exit_code(int status) {
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// The coordinator's human line: the aggregate rate of each sample (the sum
// of the copies' operations per second) and the copies' own time per op.
void aggregate_line(const std::string& case_id, int copies, const std::vector<double>& agg,
                    const std::vector<double>& per_copy) {
  if (agg.empty()) return;
  std::fprintf(stderr, "%s\n", aggregate_summary_line(case_id, copies, agg, per_copy).c_str());
}

}  // namespace

CopiesPlan plan_copies(const Options& opt, bool two_party) {
  CopiesPlan p;
  const auto& cpus = allowed_cpus();
  const int n = static_cast<int>(cpus.size());
  if (opt.copy_threads && two_party)
    throw UsageError{"--threads: copies of a two-party case are processes (leave out --threads)"};
  if (opt.cross_pairs && !two_party)
    throw UsageError{"--cross-pairs: this case has no partner process"};
  if (opt.copy_threads && opt.counters)
    throw UsageError{"--threads: --counters counts the whole process, not a copy (leave one out)"};
  p.threads = opt.copy_threads;
  p.copies = *opt.copies == 0 ? n : static_cast<int>(*opt.copies);
  if (p.copies > n && !opt.oversubscribe)
    throw UsageError{"--copies " + std::to_string(p.copies) + ": only " + std::to_string(n) +
                     " CPUs available to this process (--oversubscribe to run more copies than CPUs)"};
  if (n < 2 && !opt.oversubscribe) skip("scaling needs two CPUs or more (one available here)");
  p.oversubscribed = p.copies > n;
  p.cross_pairs = opt.cross_pairs;
  for (int i = 0; i < p.copies; ++i) {
    p.cpus.push_back(cpus[static_cast<std::size_t>(i % n)]);
    p.partner_cpus.push_back(cpus[static_cast<std::size_t>((i + (p.cross_pairs ? 1 : 0)) % n)]);
  }
  return p;
}

CopySync::CopySync(CopyShared* shared, const CopiesPlan& plan, int index)
    : shared_(shared), index_(index), cpu_(plan.cpus[static_cast<std::size_t>(index)]),
      partner_cpu_(plan.partner_cpus[static_cast<std::size_t>(index)]) {}

bool CopySync::threads() const { return shared_->threads; }

std::uint64_t CopySync::agree_iters(std::uint64_t mine) {
  std::uint64_t cur = shared_->iters_max.load();
  while (cur < mine && !shared_->iters_max.compare_exchange_weak(cur, mine)) {
  }
  barrier(*shared_);
  return shared_->iters_max.load();
}

void CopySync::start(std::uint64_t sample_idx) {
  // The previous sample's lines are out (the slots are free again).
  const auto want = static_cast<std::uint32_t>(sample_idx);
  for (std::uint32_t p; (p = shared_->printed.load(std::memory_order_acquire)) < want;)
    wait_change(&shared_->printed, p, false, no_tick);
  barrier(*shared_);
}

void CopySync::emit(const std::string& line, std::uint64_t t_start_ns, std::uint64_t elapsed_ns,
                    std::uint64_t iters) {
  if (line.size() > kLineMax) die("--copies: a sample line longer than " + std::to_string(kLineMax) + " bytes");
  CopySlot& s = slot(*shared_, index_);
  s.t_start_ns = t_start_ns;
  s.elapsed_ns = elapsed_ns;
  s.iters = iters;
  s.len = static_cast<std::uint32_t>(line.size());
  std::memcpy(s.line, line.data(), line.size());
  shared_->emitted.fetch_add(1, std::memory_order_release);
  wake_all(&shared_->emitted);
}

void CopySync::add_keys(JsonObject& o) const {
  o.add("copies", shared_->copies)
      .add("copy_idx", index_)
      .add("copy_mode", shared_->threads ? "threads" : "processes")
      .add("oversubscribed", shared_->oversubscribed);
}

int run_copies(const CopiesPlan& plan, std::uint64_t samples, const std::string& case_id, FILE* out,
               const std::function<int(CopySync&)>& body) {
  if (plan.copies > kMaxCopies) throw UsageError{"--copies: at most " + std::to_string(kMaxCopies)};
  const std::size_t bytes = sizeof(CopyShared) + sizeof(CopySlot) * static_cast<std::size_t>(plan.copies);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) die_errno("mmap (copies)", errno);
  auto* shared = new (mem) CopyShared();
  shared->copies = plan.copies;
  shared->threads = plan.threads;
  shared->oversubscribed = plan.oversubscribed;

  install_cleanup_handlers();
  std::vector<std::thread> threads;
  std::fflush(out);
  std::fflush(stderr);
  if (plan.threads) {
    for (int i = 0; i < plan.copies; ++i)
      threads.emplace_back([&, i] {
        CopySync sync(shared, plan, i);
        body(sync);  // a failure ends the process (die, skip)
      });
  } else {
    set_cleanup_hook(stop_copies);
    const pid_t parent = getpid();
    sigset_t block, old;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
    for (int i = 0; i < plan.copies; ++i) {
      sigprocmask(SIG_BLOCK, &block, &old);
      const pid_t pid = fork();
      if (pid < 0) {
        const int err = errno;
        sigprocmask(SIG_SETMASK, &old, nullptr);
        die_errno("fork (copy)", err);
      }
      if (pid == 0) {
        set_cleanup_hook(nullptr);
        g_ncopies = 0;
        for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, nullptr);
        // The copy removes its own directories and partners when the
        // coordinator goes (its SIGTERM handler, installed by body).
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(kExitFailure);
        CopySync sync(shared, plan, i);
        const int rc = body(sync);
        std::fflush(stderr);
        _exit(rc);
      }
      g_copies[g_ncopies++] = pid;
      sigprocmask(SIG_SETMASK, &old, nullptr);
    }
  }

  // A copy that failed (processes): stop the others, its status is ours. A
  // copy may exit 0 once its last line is handed over.
  std::vector<int> status_of(static_cast<std::size_t>(g_ncopies), -1);
  auto check_copies = [&] {
    if (plan.threads) return;
    for (int i = 0; i < g_ncopies; ++i) {
      int status = 0;
      if (g_copies[i] > 0 && waitpid(g_copies[i], &status, WNOHANG) == g_copies[i]) {
        g_copies[i] = 0;
        status_of[static_cast<std::size_t>(i)] = exit_code(status);
        if (exit_code(status) == 0) continue;
        std::fflush(out);
        stop_copies();
        run_cleanup();
        _exit(exit_code(status));
      }
    }
  };

  std::vector<double> agg, per_copy;
  for (std::uint64_t i = 0; i < samples; ++i) {
    const auto want = static_cast<std::uint32_t>((i + 1) * static_cast<std::uint64_t>(plan.copies));
    for (std::uint32_t e; (e = shared->emitted.load(std::memory_order_acquire)) < want;)
      wait_change(&shared->emitted, e, false, check_copies);
    double rate = 0;
    for (int c = 0; c < plan.copies; ++c) {
      const CopySlot& s = slot(*shared, c);
      std::fwrite(s.line, 1, s.len, out);
      std::fputc('\n', out);
      rate += static_cast<double>(s.iters) * 1e9 / static_cast<double>(std::max<std::uint64_t>(s.elapsed_ns, 1));
      per_copy.push_back(static_cast<double>(s.elapsed_ns) / static_cast<double>(std::max<std::uint64_t>(s.iters, 1)));
    }
    if (std::fflush(out) != 0) die_errno("write samples", errno);
    agg.push_back(rate);
    shared->printed.store(static_cast<std::uint32_t>(i + 1), std::memory_order_release);
    wake_all(&shared->printed);
  }

  int rc = 0;
  if (plan.threads) {
    for (auto& t : threads) t.join();
  } else {
    for (int i = 0; i < g_ncopies; ++i) {
      int status = 0;
      if (g_copies[i] > 0) {
        while (waitpid(g_copies[i], &status, 0) < 0) {
          if (errno != EINTR) die_errno("waitpid (copy)", errno);
        }
        g_copies[i] = 0;
        status_of[static_cast<std::size_t>(i)] = exit_code(status);
      }
      if (rc == 0) rc = status_of[static_cast<std::size_t>(i)];
    }
    g_ncopies = 0;
  }
  if (rc == 0) aggregate_line(case_id, plan.copies, agg, per_copy);
  run_cleanup();
  return rc;
}

}  // namespace kbench
