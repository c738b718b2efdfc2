// lat_sig — signal handling costs.
//
// One op    = install: one sigaction() replacing SIGUSR1's handler.
//             catch: kill(getpid(), SIGUSR1) and the delivery of the
//             signal to a handler that counts it (send + deliver + return).
//             prot: mprotect a page read-only, write to it; the write faults,
//             the SIGSEGV handler makes the page writable again and the
//             write is retried (mprotect + fault + signal + mprotect).
// Timed     = run() only; the handler, the page and the masks are setup.
// Placement = unpinned unless --cpu.
// Caveats   = `prot` includes two mprotect calls per op, as it must to arm
//             the next fault; compare it with `install` to see their share.
#include <csignal>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include "harness/bench.hpp"

namespace {

using kbench::check;

volatile sig_atomic_t g_caught = 0;
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
    sigemptyset(&sa.sa_mask);
    check(::sigaction(SIGUSR1, &sa, nullptr), "sigaction");
    pid_ = ::getpid();
  }
  void before_sample(std::uint64_t) override { g_caught = 0; }
  void run(std::uint64_t iters) override {
    while (iters--) check(::kill(pid_, SIGUSR1), "kill");
  }
  void after_sample() override {
    // A signal sent to oneself is delivered before kill() returns; if it was
    // not, the numbers would not mean what they say.
    if (g_caught == 0) kbench::die("SIGUSR1 was not delivered");
  }

 private:
  pid_t pid_ = 0;
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
