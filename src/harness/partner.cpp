// partner.cpp — forking, pinning and waiting for the other side of an IPC pair.
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/internal/affinity.hpp"
#include "harness/bench.hpp"
#include "harness/internal/cleanup.hpp"

namespace kbench {

Partner spawn_partner(Context& ctx, const std::function<void()>& body) {
  // Unflushed output would otherwise be written twice, once by each side.
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  // Block the cleanup signals across fork so the child never runs the
  // parent's handler between fork and resetting it.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &old);
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    sigprocmask(SIG_SETMASK, &old, nullptr);
    die_errno("fork (partner)", err);
  }
  if (pid == 0) {
    mark_partner_process();
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    check(prctl(PR_SET_PDEATHSIG, SIGKILL), "prctl(PR_SET_PDEATHSIG)");
    if (getppid() != parent) _exit(1);  // the parent died before prctl
    pin_as_partner(ctx);
    body();
    std::fflush(stdout);
    _exit(0);
  }
  register_partner(pid);
  sigprocmask(SIG_SETMASK, &old, nullptr);
  return Partner{pid};
}

void adopt_helper(pid_t pid) { register_helper(pid); }
void release_helper(pid_t pid) { unregister_helper(pid); }

void report_count(const Context& ctx, const std::string& what, std::uint64_t n, const std::string& unit) {
  if (!ctx.fixed_iters()) return;
  std::fprintf(stderr, "%s: %s %" PRIu64 " %s\n", ctx.bench().c_str(), what.c_str(), n, unit.c_str());
  std::fflush(stderr);
}

void pin_as_partner(const Context& ctx) {
  if (ctx.partner_cpu()) {
    pin_to_cpu(*ctx.partner_cpu());
  } else {
    unpin();
  }
}

void wait_partner(Partner& p) {
  if (p.pid <= 0) return;
  int status = 0;
  while (waitpid(p.pid, &status, 0) < 0) {
    if (errno != EINTR) die_errno("waitpid (partner)", errno);
  }
  unregister_partner(p.pid);
  p.pid = -1;
  if (WIFSIGNALED(status)) die("partner killed by signal " + std::to_string(WTERMSIG(status)));
  if (WEXITSTATUS(status) != 0) die("partner failed (exit " + std::to_string(WEXITSTATUS(status)) + ")");
}

}  // namespace kbench
