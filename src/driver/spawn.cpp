// spawn.cpp — fork/exec one invocation and supervise it (see spawn.hpp).
//
// One poll() loop watches the child's stdout and stderr pipes and the
// signal self-pipe (SIGCHLD and the driver's interrupts), so the driver
// reacts at once to the child's exit, to a timeout and to Ctrl-C, and never
// blocks on a full pipe. The child is reaped with waitpid(WNOHANG) only; a
// partner that inherited the pipes and outlives the binary cannot hold the
// driver: after the binary is reaped its group gets SIGKILL.
#include "driver/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <initializer_list>

#include "driver/signals.hpp"

namespace kbench::driver {

namespace {

constexpr std::size_t kStdoutCap = 64u << 20;

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Error report from the child between fork and exec. The driver is
// single-threaded, so the child is a consistent copy and strerror is safe;
// the message lands in the captured stderr and becomes the failure reason.
[[noreturn]] void child_fail(const char* what, const char* path) {
  const char* msg = strerror(errno);
  const char* parts[] = {"kbench-run: ", what, " ", path, ": ", msg, "\n"};
  for (const char* p : parts) (void)!write(STDERR_FILENO, p, std::strlen(p));
  _exit(127);
}

// Reads what is available, up to `cap` bytes in all (`truncated`, if given,
// says some were dropped); returns false at EOF or a real error.
bool read_some(int fd, std::string& into, std::size_t cap, bool* truncated) {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      const std::size_t room = cap > into.size() ? cap - into.size() : 0;
      if (static_cast<std::size_t>(n) > room && truncated) *truncated = true;
      into.append(buf, std::min(static_cast<std::size_t>(n), room));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    return false;
  }
}

void keep_tail(std::string& s, std::size_t n) {
  if (s.size() > 2 * n) s.erase(0, s.size() - n);
}

// The two pipes (stdout, stderr), close-on-exec; false with r.error set.
bool open_pipes(int out_pipe[2], int err_pipe[2], SpawnResult& r) {
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return false;
  }
  return true;
}

// The child between fork and exec: its own process group, stdout and
// stderr into the pipes, stdin from /dev/null.
[[noreturn]] void exec_child(std::vector<char*>& cargv, int out_w, int err_w) {
  reset_signals_in_child();
  if (setpgid(0, 0) != 0) child_fail("setpgid", "");
  if (dup2(err_w, STDERR_FILENO) < 0) _exit(127);
  if (dup2(out_w, STDOUT_FILENO) < 0) child_fail("dup2", "stdout");
  const int devnull = open("/dev/null", O_RDONLY);
  if (devnull < 0) child_fail("open", "/dev/null");
  if (dup2(devnull, STDIN_FILENO) < 0) child_fail("dup2", "stdin");
  execv(cargv[0], cargv.data());
  child_fail("exec", cargv[0]);
}

// The parent's side right after fork: the child's group set from here too,
// the write ends closed, the read ends non-blocking.
void adopt_child(pid_t pid, const int out_pipe[2], const int err_pipe[2], SpawnResult& r) {
  // Also set from the parent so that a kill(-pid) right away cannot miss;
  // EACCES means the child already exec'd, having done it itself.
  if (setpgid(pid, pid) != 0 && errno != EACCES && errno != ESRCH)
    r.error = std::string("setpgid: ") + std::strerror(errno);
  close(out_pipe[1]);
  close(err_pipe[1]);
  for (int fd : {out_pipe[0], err_pipe[0]}) {
    const int fl = fcntl(fd, F_GETFL);
    // On failure reads still work after poll() said readable, only one
    // buffer per wake-up; worth a note, not worth losing the invocation.
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
      r.error = std::string("fcntl: ") + std::strerror(errno);
  }
}

// Watches a started child until it is reaped and its pipes are drained:
// reads stdout and stderr as they come, and sends its group SIGTERM on a
// timeout or an interrupt of the driver, SIGKILL after the grace period
// (or at a second interrupt).
class Supervisor {
 public:
  Supervisor(pid_t pid, int out_fd, int err_fd, double start, double timeout_s, double grace_s, SpawnResult& r)
      : pid_(pid), out_fd_(out_fd), err_fd_(err_fd), start_(start), grace_s_(grace_s),
        deadline_(timeout_s > 0 ? start + timeout_s : 0), signals_at_start_(interrupt_count()), r_(r) {}

  void watch() {
    for (;;) {
      if (!reaped_) try_reap();
      const double t = now_s();
      if (reaped_) {
        if (!out_open_ && !err_open_) break;
        // Something of its group still holds the pipes; give it a moment
        // to flush, then stop waiting for it.
        if (t - reaped_at_ > 0.5) break;
      } else {
        signal_if_due(t);
      }
      if (!poll_once(wait_s(t))) break;
    }
  }

  // After watch(): the rest of the group killed, the child reaped for sure;
  // returns its wait status.
  int finish() {
    // Whatever is left of its process group (a partner the binary failed
    // to reap) must not keep running into the next measurement. Success
    // says nothing (not-yet-reaped zombies count), so it is not recorded.
    if (kill(-pid_, SIGKILL) != 0 && errno != ESRCH && r_.error.empty())
      r_.error = std::string("kill: ") + std::strerror(errno);
    if (!reaped_) {
      // Only after an internal error above; do not leave a zombie.
      while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
      }
      r_.duration_ms = (now_s() - start_) * 1000.0;
    }
    r_.killed = kill_sent_;
    return status_;
  }

 private:
  void try_reap() {
    pid_t w;
    do {
      w = waitpid(pid_, &status_, WNOHANG);
    } while (w < 0 && errno == EINTR);
    if (w == pid_) {
      reaped_ = true;
      reaped_at_ = now_s();
      r_.duration_ms = (reaped_at_ - start_) * 1000.0;
    } else if (w < 0) {
      r_.error = std::string("waitpid: ") + std::strerror(errno);
      reaped_ = true;
      reaped_at_ = now_s();
    }
  }

  // Interrupts, the time limit and the grace period, at time t.
  void signal_if_due(double t) {
    if (interrupt_count() > signals_at_start_) {
      if (!r_.interrupted) {
        r_.interrupted = true;
        send(SIGTERM);
        term_sent_at_ = t;
      } else if (interrupt_count() > signals_at_start_ + 1 && !kill_sent_) {
        send(SIGKILL);  // a second Ctrl-C: no more patience
        kill_sent_ = true;
      }
    }
    if (deadline_ > 0 && t >= deadline_ && term_sent_at_ < 0) {
      r_.timed_out = true;
      send(SIGTERM);
      term_sent_at_ = t;
    }
    if (term_sent_at_ >= 0 && !kill_sent_ && t - term_sent_at_ >= grace_s_) {
      send(SIGKILL);
      kill_sent_ = true;
    }
  }

  void send(int sig) {
    if (kill(-pid_, sig) != 0 && errno != ESRCH) {
      // ESRCH: the group is already gone, which is what we wanted.
      r_.error = std::string("kill: ") + std::strerror(errno);
    }
  }

  // How long the next poll may wait: until the next deadline, at most 0.25 s.
  double wait_s(double t) const {
    double wait = 0.25;
    if (reaped_) wait = 0.05;
    if (!reaped_ && deadline_ > 0 && term_sent_at_ < 0) wait = std::min(wait, deadline_ - t);
    if (!reaped_ && term_sent_at_ >= 0 && !kill_sent_) wait = std::min(wait, term_sent_at_ + grace_s_ - t);
    return wait < 0 ? 0 : wait;
  }

  // One poll of the signal self-pipe and the open pipes, then what they
  // have to read; false on a poll error (recorded).
  bool poll_once(double wait) {
    pollfd fds[3];
    int nfds = 0;
    int out_idx = -1, err_idx = -1;
    fds[nfds++] = {signal_wakeup_fd(), POLLIN, 0};
    if (out_open_) { out_idx = nfds; fds[nfds++] = {out_fd_, POLLIN, 0}; }
    if (err_open_) { err_idx = nfds; fds[nfds++] = {err_fd_, POLLIN, 0}; }
    const int pr = poll(fds, static_cast<nfds_t>(nfds), static_cast<int>(wait * 1000.0) + 1);
    if (pr < 0) {
      if (errno == EINTR) return true;
      r_.error = std::string("poll: ") + std::strerror(errno);
      return false;
    }
    if (fds[0].revents) drain_signal_wakeup();
    if (out_idx >= 0 && fds[out_idx].revents) out_open_ = read_some(out_fd_, r_.out, kStdoutCap, &r_.out_truncated);
    if (err_idx >= 0 && fds[err_idx].revents) {
      err_open_ = read_some(err_fd_, r_.err_tail, kStderrTail * 4, nullptr);
      keep_tail(r_.err_tail, kStderrTail);
    }
    return true;
  }

  const pid_t pid_;
  const int out_fd_, err_fd_;
  const double start_, grace_s_, deadline_;
  const int signals_at_start_;
  SpawnResult& r_;
  bool out_open_ = true, err_open_ = true, reaped_ = false, kill_sent_ = false;
  int status_ = 0;
  double reaped_at_ = 0, term_sent_at_ = -1;
};

}  // namespace

SpawnResult spawn_and_wait(const std::vector<std::string>& argv, double timeout_s, double grace_s) {
  SpawnResult r;
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (!open_pipes(out_pipe, err_pipe, r)) return r;
  const double start = now_s();
  const pid_t pid = fork();
  if (pid < 0) {
    r.error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return r;
  }
  if (pid == 0) exec_child(cargv, out_pipe[1], err_pipe[1]);
  r.started = true;
  adopt_child(pid, out_pipe, err_pipe, r);

  Supervisor child(pid, out_pipe[0], err_pipe[0], start, timeout_s, grace_s, r);
  child.watch();
  const int status = child.finish();
  close(out_pipe[0]);
  close(err_pipe[0]);
  if (r.err_tail.size() > kStderrTail) r.err_tail.erase(0, r.err_tail.size() - kStderrTail);
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signaled = true;
    r.term_signal = WTERMSIG(status);
  }
  return r;
}

}  // namespace kbench::driver
