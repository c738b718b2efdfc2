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
//             <dir of this binary>/../libexec/kbench-exec-helper.
#include <climits>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/bench.hpp"

extern char** environ;

namespace {

using kbench::check;

std::string find_helper() {
  if (const char* env = std::getenv("KBENCH_EXEC_HELPER"); env && *env) return env;
  char self[PATH_MAX];
  const ssize_t n = check(::readlink("/proc/self/exe", self, sizeof self - 1), "readlink /proc/self/exe");
  self[n] = '\0';
  std::string dir(self);
  dir.erase(dir.rfind('/'));
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
