// lat_proc — process creation and teardown.
//
// One op    = fork: fork(), the child _exit(0)s, the parent waits for it.
//             exec: fork(), the child execve()s a tiny static helper that
//             exits 0, the parent waits. shell: fork(), the child runs
//             /bin/sh -c HELPER, the parent waits. fork_mem: fork as
//             `fork`, from a parent that holds parent_mb MB more of private
//             anonymous memory, touched first, without transparent huge
//             pages (MADV_NOHUGEPAGE): one page-table entry per 4 KB page
//             for fork to copy (write-protected for copy on write) and the
//             child's exit to tear down. fork_mem minus fork is the kernel's
//             page-table copy cost for that much memory. fork_mem is
//             memory-bound: copying and tearing down 16-65 K page-table
//             entries follows the memory system's regime, as the memory
//             control does (tests/validation/README.md, "Machine shifts in
//             the host's history"). fork_harness: fork as `fork`, from this
//             process itself (the harness: dynamic, libstdc++, a few MB).
// Parent    = fork, fork_mem, exec and shell fork from a small static helper
//             (src/helper/fork_helper.c), started in setup and driven over
//             two pipes: fork copies the parent's page tables and mappings,
//             and from this process it would cost more than from a
//             hand-written loop (tests/validation/README.md, "lat_proc fork
//             against hand loops"). fork_harness keeps that number.
// Timed     = run() only: the command to the helper, its loop, its answer
//             (two pipe wake-ups a sample, not an operation); starting the
//             helper, touching the memory and reading the helper's size and
//             resource usage are setup and between samples. The helper
//             checks every child's exit status: a failed exec is a failure,
//             not a number. utime_ns, stime_ns and the counts of a sample
//             are this process's plus the helper's and its children's.
// Recorded  = parent_vm_kb and parent_rss_kb in every sample: the forking
//             process's mapped (VmSize) and resident (VmRSS) size before the
//             sample, from /proc/<pid>/statm (null without /proc).
// Placement = unpinned unless --cpu; the helper and every child inherit the
//             pinning.
// Caveats   = `shell` includes the dynamic loading of /bin/sh, which is not
//             the kernel's alone. The exec target is $KBENCH_EXEC_HELPER if
//             set, else <dir of this binary>/../libexec/kbench-exec-helper,
//             the forking helper $KBENCH_FORK_HELPER, else
//             ../libexec/kbench-fork-helper (the binary found without /proc
//             too: AT_EXECFN).
#include <array>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
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

// $ENV if set, else <dir of this binary>/../libexec/NAME.
std::string find_libexec(const char* env, const char* name) {
  if (const char* v = std::getenv(env); v && *v) return v;
  std::string dir = self_path();
  const auto slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  return dir + "/../libexec/" + name;
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

[[noreturn]] void failed_child(int status, const std::string& target) {
  if (WIFSIGNALED(status)) kbench::die("child killed by signal " + std::to_string(WTERMSIG(status)));
  kbench::die("child exited with status " + std::to_string(WEXITSTATUS(status)) +
              (WEXITSTATUS(status) == 127 ? " (exec of " + target + " failed)" : ""));
}

// The forking helper (src/helper/fork_helper.c): its commands and the words
// of its answers, as it defines them; every answer starts with kMagic.
constexpr std::int64_t kSize = 1, kRun = 2, kUsage = 3;
constexpr std::int64_t kMagic = 0x4b42464801LL;
enum Word { kWordMagic, kStatus, kDetail, kDone, kVmKb, kRssKb, kUtime, kStime, kMinflt, kMajflt, kNvcsw, kNivcsw, kWords };
enum Status { kOk, kForkFailed, kWaitFailed, kChildFailed, kBadCommand };
using Answer = std::array<std::int64_t, kWords>;

// The helper process: started with the kind of child to make, the exec
// target and the memory to hold, then asked over two pipes.
class ForkHelper {
 public:
  void start(const std::string& path, const char* kind, const std::string& target, std::uint64_t parent_kb) {
    path_ = path;
    if (::access(path.c_str(), X_OK) != 0)
      kbench::die_errno(("fork helper " + path + " (build it with make, or set KBENCH_FORK_HELPER)").c_str(), errno);
    int to[2], from[2];
    check(::pipe2(to, O_CLOEXEC), "pipe2");
    check(::pipe2(from, O_CLOEXEC), "pipe2");
    std::string kb = std::to_string(parent_kb);
    char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>(kind), const_cast<char*>(target.c_str()),
                    kb.data(), nullptr};
    std::fflush(stdout);
    std::fflush(stderr);
    // The cleanup signals blocked across fork, so that the child never runs
    // this process's handler; they are back to their defaults after execve.
    sigset_t block, old;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
    sigprocmask(SIG_BLOCK, &block, &old);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      // Only async-signal-safe calls until execve (--copies threads).
      const int in = ::fcntl(to[0], F_DUPFD, 10), out = ::fcntl(from[1], F_DUPFD, 10);
      if (in < 0 || out < 0 || ::dup2(in, 3) < 0 || ::dup2(out, 4) < 0) ::_exit(126);
      ::close(in);
      ::close(out);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      sigprocmask(SIG_SETMASK, &old, nullptr);
      ::execve(path.c_str(), argv, environ);
      ::_exit(127);
    }
    const int fork_errno = errno;
    if (pid > 0) kbench::adopt_helper(pid);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    ::close(to[0]);
    ::close(from[1]);
    if (pid < 0) kbench::die_errno("fork (fork helper)", fork_errno);
    pid_ = pid;
    cmd_ = to[1];
    answers_ = from[0];
    ready_ = receive();   // its size and usage once the memory is touched
  }

  const Answer& ready() const { return ready_; }

  Answer ask(std::int64_t what, std::int64_t n = 0) {
    const std::int64_t cmd[2] = {what, n};
    const char* out = reinterpret_cast<const char*>(cmd);
    all(sizeof cmd, [&](std::size_t done) { return ::write(cmd_, out + done, sizeof cmd - done); });
    return receive();
  }

  // Ends the helper (the end of its commands) and checks that it exited 0.
  void stop() {
    if (pid_ <= 0) return;
    ::close(cmd_);
    ::close(answers_);
    const int status = reap();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) died(status);
  }

 private:
  // All `n` bytes through `io(done)` (a read or a write on one of the
  // pipes); the helper is gone when it moves none.
  template <typename Io>
  void all(std::size_t n, Io io) {
    for (std::size_t done = 0; done < n;) {
      const ssize_t k = io(done);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) gone();
      done += static_cast<std::size_t>(k);
    }
  }

  Answer receive() {
    Answer a{};
    char* in = reinterpret_cast<char*>(a.data());
    all(sizeof a, [&](std::size_t done) { return ::read(answers_, in + done, sizeof a - done); });
    if (a[kWordMagic] != kMagic) kbench::die("fork helper " + path_ + " speaks another protocol (rebuild with make)");
    return a;
  }

  int reap() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0)
      if (errno != EINTR) kbench::die_errno("waitpid (fork helper)", errno);
    kbench::release_helper(pid_);
    pid_ = -1;
    return status;
  }

  // The helper stopped answering: why, from its exit status.
  [[noreturn]] void gone() { died(reap()); }

  [[noreturn]] void died(int status) {
    if (WIFSIGNALED(status))
      kbench::die("fork helper " + path_ + " killed by signal " + std::to_string(WTERMSIG(status)));
    kbench::die("fork helper " + path_ + " exited with status " + std::to_string(WEXITSTATUS(status)) +
                (WEXITSTATUS(status) == 127 ? " (could not execute it)" : ""));
  }

  std::string path_;
  pid_t pid_ = -1;
  int cmd_ = -1, answers_ = -1;
  Answer ready_{};
};

class Proc final : public kbench::Fixture {
 public:
  enum class Kind { fork, fork_mem, exec, shell, fork_harness };
  explicit Proc(Kind kind) : kind_(kind) {}

  void setup(kbench::Context& ctx) override {
    ctx_ = &ctx;
    std::uint64_t parent_kb = 0;
    if (kind_ == Kind::fork_mem) {
      const std::uint64_t mb = ctx.param_u64("parent_mb", 1, 1048576);
      kbench::require_memory(mb << 20, "lat_proc fork_mem parent_mb=" + std::to_string(mb));
      parent_kb = mb << 10;
    }
    if (kind_ == Kind::exec || kind_ == Kind::shell) {
      target_ = find_libexec("KBENCH_EXEC_HELPER", "kbench-exec-helper");
      if (::access(target_.c_str(), X_OK) != 0)
        kbench::die_errno(("exec helper " + target_ + " (build it with make, or set KBENCH_EXEC_HELPER)").c_str(), errno);
      if (kind_ == Kind::shell && ::access("/bin/sh", X_OK) != 0) kbench::skip("no /bin/sh");
    }
    if (kind_ == Kind::fork_harness) return;
    const char* word = kind_ == Kind::exec ? "exec" : kind_ == Kind::shell ? "shell" : "fork";
    helper_.start(find_libexec("KBENCH_FORK_HELPER", "kbench-fork-helper"), word, target_.empty() ? "-" : target_,
                  parent_kb);
  }

  void before_sample(std::uint64_t) override {
    Size sz = self_size();
    if (kind_ != Kind::fork_harness) {
      before_ = helper_.ask(kSize);
      sz = kbench::simulated_missing("procfs") ? Size{} : Size{before_[kVmKb], before_[kRssKb]};
    }
    ctx_->set_info_int("parent_vm_kb", known(sz.vm_kb));
    ctx_->set_info_int("parent_rss_kb", known(sz.rss_kb));
  }

  void run(std::uint64_t iters) override {
    if (kind_ == Kind::fork_harness) return fork_here(iters);
    const Answer a = helper_.ask(kRun, static_cast<std::int64_t>(iters));
    switch (a[kStatus]) {
      case kOk: break;
      case kForkFailed: kbench::die_errno("fork", static_cast<int>(a[kDetail]));
      case kWaitFailed: kbench::die_errno("waitpid", static_cast<int>(a[kDetail]));
      case kChildFailed: failed_child(static_cast<int>(a[kDetail]), target_);
      default: kbench::die("fork helper: status " + std::to_string(a[kStatus]));
    }
    if (a[kDone] != static_cast<std::int64_t>(iters))
      kbench::die("fork helper: " + std::to_string(a[kDone]) + " operations done of " + std::to_string(iters));
    created_ += iters;
  }

  void after_sample() override {
    if (kind_ == Kind::fork_harness) return;
    const Answer after = helper_.ask(kUsage);
    used_ = {after[kUtime] - before_[kUtime], after[kStime] - before_[kStime], after[kNvcsw] - before_[kNvcsw],
             after[kNivcsw] - before_[kNivcsw], after[kMinflt] - before_[kMinflt], after[kMajflt] - before_[kMajflt]};
  }

  kbench::OutsideUsage outside_usage() const override { return used_; }

  void teardown() override {
    if (kind_ == Kind::fork_harness) return;
    helper_.stop();
    kbench::report_count(*ctx_, "fork helper created", created_, "processes");
  }

 private:
  void fork_here(std::uint64_t iters) {
    while (iters--) {
      const pid_t pid = static_cast<pid_t>(check(::fork(), "fork"));
      if (pid == 0) ::_exit(0);
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) kbench::die_errno("waitpid", errno);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed_child(status, "");
    }
  }

  Kind kind_;
  std::string target_;
  kbench::Context* ctx_ = nullptr;
  ForkHelper helper_;
  Answer before_{};
  kbench::OutsideUsage used_;
  std::uint64_t created_ = 0;
};

}  // namespace

KBENCH_MAIN("lat_proc", kbench::category("Processor and processes", 10).bench_rank(3),
            kbench::cases({{kbench::fixture<Proc>("fork", Proc::Kind::fork).summary(kbench::column("fork", 8).note("parent: a small static process")),
                            kbench::fixture<Proc>("exec", Proc::Kind::exec).summary(kbench::column("exec", 9)),
                            kbench::fixture<Proc>("shell", Proc::Kind::shell).summary(kbench::column("shell", 10))},
                           kbench::sweep(kbench::fixture<Proc>("fork_mem", Proc::Kind::fork_mem).memory_bound(), "parent_mb", {"64", "256"}),
                           {kbench::fixture<Proc>("fork_harness", Proc::Kind::fork_harness)}}))
