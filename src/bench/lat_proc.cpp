// lat_proc — process creation and teardown.
//
// One op    = fork: fork(), the child _exit(0)s, the parent waits for it.
//             exec: fork(), the child execve()s a tiny static helper that
//             exits 0, the parent waits. shell: fork(), the child runs
//             /bin/sh -c HELPER, the parent waits. fork_mem: fork as
//             `fork`, from a parent that holds parent_mb MB of private
//             anonymous memory, touched in setup, without transparent huge
//             pages (MADV_NOHUGEPAGE): one page-table entry per 4 KB page
//             for fork to copy (write-protected for copy on write) and the
//             child's exit to tear down. fork_mem minus fork is the kernel's
//             page-table copy cost for that much memory. fork_mem is
//             memory-bound: copying and tearing down 16-65 K page-table
//             entries follows the memory system's regime, as the memory
//             control does (tests/validation/README.md, "Machine shifts in
//             the host's history").
// Timed     = run() only; finding the helper and touching the memory are
//             setup. Every child's exit status is checked: a failed exec is
//             a failure, not a number.
// Recorded  = parent_vm_kb and parent_rss_kb in every sample: the forking
//             process's mapped (VmSize) and resident (VmRSS) size before the
//             sample, from /proc/self/statm (null without /proc).
// Placement = unpinned unless --cpu (children inherit the pinning).
// Caveats   = the cost grows with the parent's address space (page tables
//             and mappings to copy, pages to fault back after the fork):
//             `fork` is the harness's own process (its size is recorded),
//             fork_mem adds a known amount. Measured on a 2-vCPU VM, pinned
//             and interleaved: 1.9x a static hand loop of fork+_exit+wait
//             (684 kB resident, 2.1 page faults per fork), 1.24x the same
//             hand loop linked dynamically (1.53x the static one): this
//             process is dynamic (libstdc++), ~3.5 MB resident and takes 21-23
//             faults per fork. Resident size alone (the static loop grown to
//             3.5 MB) added 9%. `shell` includes
//             the dynamic loading of /bin/sh, which is not the kernel's alone.
//             The helper is $KBENCH_EXEC_HELPER if set, else
//             <dir of this binary>/../libexec/kbench-exec-helper (the
//             binary found without /proc too: AT_EXECFN).
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/bench.hpp"
#include "harness/memory.hpp"

extern char** environ;

namespace {

using kbench::check;

// This binary's path: /proc/self/exe, or where /proc is not mounted (or
// KBENCH_MISSING=procfs) the path it was executed by (AT_EXECFN), which is
// right as long as the working directory has not changed since.
std::string self_path() {
  char self[PATH_MAX];
  const ssize_t n = kbench::simulated_missing("procfs") ? -1 : ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) return std::string(self, static_cast<std::size_t>(n));
  const auto* execfn = reinterpret_cast<const char*>(::getauxval(AT_EXECFN));
  if (!execfn || !*execfn) kbench::die("cannot find this binary: no /proc/self/exe and no AT_EXECFN (set KBENCH_EXEC_HELPER)");
  return execfn;
}

std::string find_helper() {
  if (const char* env = std::getenv("KBENCH_EXEC_HELPER"); env && *env) return env;
  std::string dir = self_path();
  const auto slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  return dir + "/../libexec/kbench-exec-helper";
}

// The forking process's mapped and resident size in KB, from
// /proc/self/statm (pages): {-1, -1} where it cannot be read.
struct Size {
  std::int64_t vm_kb = -1, rss_kb = -1;
};
Size self_size() {
  Size sz;
  FILE* f = kbench::simulated_missing("procfs") ? nullptr : std::fopen("/proc/self/statm", "re");
  if (!f) return sz;
  unsigned long long vm = 0, rss = 0;
  if (std::fscanf(f, "%llu %llu", &vm, &rss) == 2) {
    const auto kb = static_cast<std::int64_t>(kbench::page_size() / 1024);
    sz.vm_kb = static_cast<std::int64_t>(vm) * kb;
    sz.rss_kb = static_cast<std::int64_t>(rss) * kb;
  }
  std::fclose(f);
  return sz;
}

std::optional<std::int64_t> known(std::int64_t v) { return v < 0 ? std::nullopt : std::optional<std::int64_t>(v); }

class Proc final : public kbench::Fixture {
 public:
  enum class Kind { fork, fork_mem, exec, shell };
  explicit Proc(Kind kind) : kind_(kind) {}

  void setup(kbench::Context& ctx) override {
    ctx_ = &ctx;
    if (kind_ == Kind::fork_mem) {
      const std::uint64_t mb = ctx.param_u64("parent_mb", 1, 1048576);
      kbench::require_memory(mb << 20, "lat_proc fork_mem parent_mb=" + std::to_string(mb));
      memory_ = kbench::Buffer(static_cast<std::size_t>(mb << 20), 0x5a, true);
    }
    if (kind_ == Kind::exec || kind_ == Kind::shell) {
      helper_ = find_helper();
      if (::access(helper_.c_str(), X_OK) != 0)
        kbench::die_errno(("exec helper " + helper_ + " (build it with make, or set KBENCH_EXEC_HELPER)").c_str(), errno);
      if (kind_ == Kind::shell && ::access("/bin/sh", X_OK) != 0) kbench::skip("no /bin/sh");
    }
  }

  void before_sample(std::uint64_t) override {
    const Size sz = self_size();
    ctx_->set_info_int("parent_vm_kb", known(sz.vm_kb));
    ctx_->set_info_int("parent_rss_kb", known(sz.rss_kb));
  }

  void run(std::uint64_t iters) override {
    while (iters--) {
      const pid_t pid = static_cast<pid_t>(check(::fork(), "fork"));
      if (pid == 0) child();
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) kbench::die_errno("waitpid", errno);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed_child(status);
    }
  }

 private:
  [[noreturn]] void child() {
    if (kind_ == Kind::exec) {
      char* argv[] = {const_cast<char*>(helper_.c_str()), nullptr};
      ::execve(helper_.c_str(), argv, environ);
    } else if (kind_ == Kind::shell) {
      char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"), const_cast<char*>(helper_.c_str()), nullptr};
      ::execve("/bin/sh", argv, environ);
    } else {
      ::_exit(0);
    }
    ::_exit(127);  // exec failed; the parent reports it
  }

  [[noreturn]] void failed_child(int status) {
    if (WIFSIGNALED(status)) kbench::die("child killed by signal " + std::to_string(WTERMSIG(status)));
    kbench::die("child exited with status " + std::to_string(WEXITSTATUS(status)) +
                (WEXITSTATUS(status) == 127 ? " (exec of " + helper_ + " failed)" : ""));
  }

  Kind kind_;
  std::string helper_;
  kbench::Context* ctx_ = nullptr;
  kbench::Buffer memory_;  // fork_mem: the parent's touched memory
};

}  // namespace

KBENCH_MAIN("lat_proc", kbench::category("Processor and processes", 10).bench_rank(3),
            kbench::cases({{kbench::fixture<Proc>("fork", Proc::Kind::fork).summary(kbench::column("fork", 8).note("parent: the harness process")),
                            kbench::fixture<Proc>("exec", Proc::Kind::exec).summary(kbench::column("exec", 9)),
                            kbench::fixture<Proc>("shell", Proc::Kind::shell).summary(kbench::column("shell", 10))},
                           kbench::sweep(kbench::fixture<Proc>("fork_mem", Proc::Kind::fork_mem).memory_bound(), "parent_mb", {"64", "256"})}))
