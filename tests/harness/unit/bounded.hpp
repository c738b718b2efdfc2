// bounded.hpp — the unit tests' waits on a child process, each with a bound:
// a child that never answers fails the test after kBoundSeconds instead of
// hanging it (the bound is far above what a loaded machine needs).
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace kbench_test {

constexpr int kBoundSeconds = 60;

inline double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// waitpid(pid, status) for at most `seconds`; past that the child is killed
// (SIGKILL), reaped, and the answer is false.
inline bool wait_child(pid_t pid, int* status, int seconds = kBoundSeconds) {
  const double deadline = now_s() + seconds;
  while (now_s() < deadline) {
    const pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return false;
    usleep(2000);
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
  return false;
}

// What `fd` gives up to and including the first newline, for at most
// `seconds` (less, without the newline, at EOF or past the bound).
inline std::string read_line(int fd, int seconds = kBoundSeconds) {
  std::string s;
  const double deadline = now_s() + seconds;
  while (s.find('\n') == std::string::npos) {
    const int left_ms = static_cast<int>((deadline - now_s()) * 1000);
    if (left_ms <= 0) break;
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, left_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    char c;
    const ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    s += c;
  }
  return s;
}

}  // namespace kbench_test
