// lat_sig — signal handling costs.
//
// One op    = install: one sigaction() replacing SIGUSR1's handler.
//             catch: kill(getpid(), SIGUSR1) and the delivery of the
//             signal to a handler that counts it (send + deliver + return);
//             after every sample the count must equal the kills, exactly.
//             prot: mprotect a page read-only, write to it; the write faults,
//             the SIGSEGV handler makes the page writable again and the
//             write is retried (mprotect + fault + signal + mprotect).
// Timed     = run() only; the handler, the page and the masks are setup.
// Placement = unpinned unless --cpu.
// Caveats   = `prot` includes two mprotect calls per op, as it must to arm
//             the next fault; compare it with `install` to see their share.
#include <csignal>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#include "harness/bench.hpp"

namespace {

using kbench::check;

// Written only by the handler, which runs in the main thread inside kill():
// 64 bits, so that a sample of more than 2^31 kills still counts exactly.
volatile std::uint64_t g_caught = 0;
char* g_page = nullptr;
long g_page_size = 0;

void on_usr1(int) { g_caught = g_caught + 1; }

void on_segv(int sig, siginfo_t* info, void*) {
  char* addr = static_cast<char*>(info->si_addr);
  if (g_page == nullptr || addr < g_page || addr >= g_page + g_page_size ||
      mprotect(g_page, static_cast<size_t>(g_page_size), PROT_READ | PROT_WRITE) != 0) {
    // Not our fault: restore the default action and let it crash for real.
    signal(sig, SIG_DFL);
  }
}

class Install final : public kbench::Fixture {
 public:
  void setup(kbench::Context&) override {
    std::memset(&sa_, 0, sizeof sa_);
    sa_.sa_handler = on_usr1;
    sigemptyset(&sa_.sa_mask);
  }
  void run(std::uint64_t iters) override {
    struct sigaction old;
    while (iters--) check(::sigaction(SIGUSR1, &sa_, &old), "sigaction");
  }

 private:
  struct sigaction sa_;
};

class Catch final : public kbench::Fixture {
 public:
  void setup(kbench::Context&) override {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    // A SIGUSR1 from elsewhere must fail the sample (after_sample), not
    // interrupt the harness's write of a sample line with EINTR.
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    check(::sigaction(SIGUSR1, &sa, nullptr), "sigaction");
    pid_ = ::getpid();
  }
  void before_sample(std::uint64_t iters) override {
    g_caught = 0;
    sent_ = iters;
  }
  void run(std::uint64_t iters) override {
    while (iters--) check(::kill(pid_, SIGUSR1), "kill");
  }
  void after_sample() override {
    // A signal sent to oneself, unblocked, is delivered before kill()
    // returns, so every kill ran the handler once. Fewer (a signal blocked
    // or merged with a pending one) or more (a SIGUSR1 from elsewhere) and
    // the time is not that of `sent_` deliveries.
    const auto caught = static_cast<std::uint64_t>(g_caught);
    if (caught != sent_)
      kbench::die("SIGUSR1 handled " + std::to_string(caught) + " times for " + std::to_string(sent_) + " kills");
  }

 private:
  pid_t pid_ = 0;
  std::uint64_t sent_ = 0;
};

class Prot final : public kbench::Fixture {
 public:
  void setup(kbench::Context&) override {
    g_page_size = ::sysconf(_SC_PAGESIZE);
    void* p = ::mmap(nullptr, static_cast<size_t>(g_page_size), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) kbench::die_errno("mmap", errno);
    g_page = static_cast<char*>(p);
    g_page[0] = 1;  // fault it in: only protection faults are timed
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    check(::sigaction(SIGSEGV, &sa, nullptr), "sigaction");
  }
  void run(std::uint64_t iters) override {
    volatile char* page = g_page;
    while (iters--) {
      check(::mprotect(g_page, static_cast<size_t>(g_page_size), PROT_READ), "mprotect");
      page[0] = static_cast<char>(page[0] + 1);
    }
  }
  void teardown() override {
    signal(SIGSEGV, SIG_DFL);
    check(::munmap(g_page, static_cast<size_t>(g_page_size)), "munmap");
    g_page = nullptr;
  }
};

}  // namespace

KBENCH_MAIN("lat_sig", kbench::category("Processor and processes", 10).bench_rank(2),
            {kbench::fixture<Install>("install").summary(kbench::column("sig inst", 6)),
             kbench::fixture<Catch>("catch").summary(kbench::column("sig hndl", 7)),
             kbench::fixture<Prot>("prot").category(kbench::category("File and VM latency", 40))
                 .summary(kbench::column("prot fault", 6))})
