// scratch.hpp — a private $TMPDIR for the benchmark invocations.
//
// A benchmark removes its own temporary directories when it ends or is
// interrupted, but nothing can clean up after SIGKILL (a timeout's last
// resort, the OOM killer, a user's kill -9). So the driver gives every
// invocation a fresh directory, made with mkdtemp under the user's $TMPDIR
// (else /tmp: the same file system the benchmarks would have used), as
// $TMPDIR, and removes it with whatever is left in it when the invocation
// ends. What was left is counted in runs.jsonl.
#pragma once

#include <string>

namespace kbench::driver {

class ScratchDir {
 public:
  // Remembers the user's $TMPDIR; nothing is created yet.
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Makes a fresh directory and points $TMPDIR at it. False (with a
  // message in `error`) if it cannot be made: the invocation then runs
  // with the user's $TMPDIR unchanged.
  bool prepare(std::string* error);
  // Removes the directory and everything in it; returns how many entries
  // the invocation left behind in it (-1 if removal failed), and restores
  // the user's $TMPDIR.
  int sweep();

 private:
  std::string base_;      // the user's $TMPDIR, or /tmp
  bool had_tmpdir_ = false;
  std::string user_tmpdir_;
  std::string path_;      // current scratch directory, "" when none
};

}  // namespace kbench::driver
