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
void child_fail(const char* what, const char* path) {
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
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return r;
  }

  const double start = now_s();
  const pid_t pid = fork();
  if (pid < 0) {
    r.error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return r;
  }
  if (pid == 0) {
    reset_signals_in_child();
    if (setpgid(0, 0) != 0) child_fail("setpgid", "");
    if (dup2(err_pipe[1], STDERR_FILENO) < 0) _exit(127);
    if (dup2(out_pipe[1], STDOUT_FILENO) < 0) child_fail("dup2", "stdout");
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0) child_fail("open", "/dev/null");
    if (dup2(devnull, STDIN_FILENO) < 0) child_fail("dup2", "stdin");
    execv(cargv[0], cargv.data());
    child_fail("exec", cargv[0]);
  }
  r.started = true;
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

  bool out_open = true, err_open = true, reaped = false;
  int status = 0;
  double reaped_at = 0, term_sent_at = -1;
  bool kill_sent = false;
  const double deadline = timeout_s > 0 ? start + timeout_s : 0;
  const int signals_at_start = interrupt_count();

  auto send = [&](int sig) {
    if (kill(-pid, sig) != 0 && errno != ESRCH) {
      // ESRCH: the group is already gone, which is what we wanted.
      r.error = std::string("kill: ") + std::strerror(errno);
    }
  };

  for (;;) {
    if (!reaped) {
      pid_t w;
      do {
        w = waitpid(pid, &status, WNOHANG);
      } while (w < 0 && errno == EINTR);
      if (w == pid) {
        reaped = true;
        reaped_at = now_s();
        r.duration_ms = (reaped_at - start) * 1000.0;
      } else if (w < 0) {
        r.error = std::string("waitpid: ") + std::strerror(errno);
        reaped = true;
        reaped_at = now_s();
      }
    }
    const double t = now_s();
    if (reaped) {
      if (!out_open && !err_open) break;
      // Something of its group still holds the pipes; give it a moment to
      // flush, then stop waiting for it.
      if (t - reaped_at > 0.5) break;
    } else {
      if (interrupt_count() > signals_at_start) {
        if (!r.interrupted) {
          r.interrupted = true;
          send(SIGTERM);
          term_sent_at = t;
        } else if (interrupt_count() > signals_at_start + 1 && !kill_sent) {
          send(SIGKILL);  // a second Ctrl-C: no more patience
          kill_sent = true;
        }
      }
      if (deadline > 0 && t >= deadline && term_sent_at < 0) {
        r.timed_out = true;
        send(SIGTERM);
        term_sent_at = t;
      }
      if (term_sent_at >= 0 && !kill_sent && t - term_sent_at >= grace_s) {
        send(SIGKILL);
        kill_sent = true;
      }
    }

    double wait_s = 0.25;
    if (reaped) wait_s = 0.05;
    if (!reaped && deadline > 0 && term_sent_at < 0) wait_s = std::min(wait_s, deadline - t);
    if (!reaped && term_sent_at >= 0 && !kill_sent)
      wait_s = std::min(wait_s, term_sent_at + grace_s - t);
    if (wait_s < 0) wait_s = 0;

    pollfd fds[3];
    int nfds = 0;
    int out_idx = -1, err_idx = -1;
    fds[nfds++] = {signal_wakeup_fd(), POLLIN, 0};
    if (out_open) { out_idx = nfds; fds[nfds++] = {out_pipe[0], POLLIN, 0}; }
    if (err_open) { err_idx = nfds; fds[nfds++] = {err_pipe[0], POLLIN, 0}; }
    const int pr = poll(fds, static_cast<nfds_t>(nfds), static_cast<int>(wait_s * 1000.0) + 1);
    if (pr < 0) {
      if (errno == EINTR) continue;
      r.error = std::string("poll: ") + std::strerror(errno);
      break;
    }
    if (fds[0].revents) drain_signal_wakeup();
    if (out_idx >= 0 && fds[out_idx].revents)
      out_open = read_some(out_pipe[0], r.out, kStdoutCap, &r.out_truncated);
    if (err_idx >= 0 && fds[err_idx].revents) {
      err_open = read_some(err_pipe[0], r.err_tail, kStderrTail * 4, nullptr);
      keep_tail(r.err_tail, kStderrTail);
    }
  }

  // Whatever is left of its process group (a partner the binary failed to
  // reap) must not keep running into the next measurement. Success says
  // nothing (not-yet-reaped zombies count), so it is not recorded.
  if (kill(-pid, SIGKILL) != 0 && errno != ESRCH && r.error.empty())
    r.error = std::string("kill: ") + std::strerror(errno);
  if (!reaped) {
    // Only after an internal error above; do not leave a zombie.
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.duration_ms = (now_s() - start) * 1000.0;
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  if (r.err_tail.size() > kStderrTail) r.err_tail.erase(0, r.err_tail.size() - kStderrTail);
  r.killed = kill_sent;

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
