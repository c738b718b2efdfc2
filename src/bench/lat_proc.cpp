// lat_proc — process creation and teardown.
//
// One op    = fork: fork(), the child _exit(0)s, the parent waits for it.
//             exec: fork(), the child execve()s a tiny static helper that
//             exits 0, the parent waits. shell: fork(), the child runs
//             /bin/sh -c HELPER, the parent waits.
// Timed     = run() only; finding the helper is setup. Every child's exit
//             status is checked: a failed exec is a failure, not a number.
// Placement = unpinned unless --cpu (children inherit the pinning).
// Caveats   = the cost grows with the parent's address space (page tables
//             to copy); the harness keeps it small. `shell` includes the
//             dynamic loading of /bin/sh, which is not the kernel's alone.
//             The helper is $KBENCH_EXEC_HELPER if set, else
//             <dir of this binary>/../libexec/kbench-exec-helper (the
//             binary found without /proc too: AT_EXECFN).
#include <climits>
#include <cstdlib>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/bench.hpp"

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

class Proc final : public kbench::Fixture {
 public:
  enum class Kind { fork, exec, shell };
  explicit Proc(Kind kind) : kind_(kind) {}

  void setup(kbench::Context&) override {
    if (kind_ != Kind::fork) {
      helper_ = find_helper();
      if (::access(helper_.c_str(), X_OK) != 0)
        kbench::die_errno(("exec helper " + helper_ + " (build it with make, or set KBENCH_EXEC_HELPER)").c_str(), errno);
      if (kind_ == Kind::shell && ::access("/bin/sh", X_OK) != 0) kbench::skip("no /bin/sh");
    }
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
};

}  // namespace

KBENCH_MAIN("lat_proc", kbench::category("Processor and processes", 10).bench_rank(3),
            {kbench::fixture<Proc>("fork", Proc::Kind::fork).summary(kbench::column("fork", 8)),
             kbench::fixture<Proc>("exec", Proc::Kind::exec).summary(kbench::column("exec", 9)),
             kbench::fixture<Proc>("shell", Proc::Kind::shell).summary(kbench::column("shell", 10))})
