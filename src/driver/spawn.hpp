// spawn.hpp — run one benchmark invocation: a child with a time limit, its
// stdout kept whole and the tail of its stderr.
//
// The child gets its own process group so that a timeout or an interrupt can
// reach the partner processes it forked too (SIGTERM to the group first, so
// that the binary can clean up, then SIGKILL after a grace period), and so
// that the terminal's Ctrl-C goes to the driver alone, which then decides
// what the child gets.
#pragma once

#include <string>
#include <vector>

namespace kbench::driver {

struct SpawnResult {
  bool started = false;          // false: fork/pipe failed, see `error`
  bool exited = false;           // exit_code is valid
  int exit_code = -1;
  bool signaled = false;         // term_signal is valid
  int term_signal = 0;
  bool timed_out = false;        // we sent SIGTERM because of the time limit
  bool interrupted = false;      // we sent SIGTERM because the driver was signalled
  bool killed = false;           // SIGKILL was needed after the grace period
  bool out_truncated = false;    // stdout exceeded the cap and was cut
  std::string out;               // all of stdout (up to the cap)
  std::string err_tail;          // the last kStderrTail bytes of stderr
  double duration_ms = 0;
  std::string error;
};

constexpr std::size_t kStderrTail = 2048;

// Runs argv[0] with argv, stdin from /dev/null. `timeout_s` <= 0: no limit.
SpawnResult spawn_and_wait(const std::vector<std::string>& argv, double timeout_s,
                           double grace_s = 5.0);

}  // namespace kbench::driver
