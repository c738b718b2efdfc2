// run.hpp — the processes kbench-campaign starts: each step's kbench-run
// (or scripts/vm-run), with a deadline, and the short commands it asks of
// the machine (systemctl, modprobe); the status text and the report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "driver/campaign.hpp"

namespace kbench::campaign {

struct Ran {
  int status = -1;         // exit status, or 128+signal
  std::string out;         // stdout, when it was captured
  std::string last_line;   // its last non-empty line (kbench-run: the run directory)
  bool timed_out = false;  // the deadline passed: it was killed (or left behind, unkillable)
};

struct RunOptions {
  std::string out_file;    // stdout to this file (else captured)
  std::string err_file;    // stderr appended to this file (else ours)
  int deadline_s = 0;      // > 0: past it, SIGTERM, then SIGKILL to its process group
  // called about once a second while it runs (the watchdog's ping)
  std::function<void()> tick;
};

// argv in its own process group (a signal we get is passed on to it: the
// terminal's Ctrl-C, campaign-stop's SIGTERM, the shutdown's).
Ran run_child(const std::vector<std::string>& argv, const RunOptions& o = {});

// A short command of the machine's (systemctl, modprobe): "" when it cannot
// be found in the usual places.
std::string which(const std::string& name);

// Each kernel's runs under their own root, DIR/A, DIR/B, ...
std::string kernel_out(const State& s, int kernel);
std::vector<std::string> step_argv(const State& s, int kernel);
std::string quoted(const std::vector<std::string>& argv);

// the status text: kernels, boots, steps, their times, an ETA
std::string describe(const State& s, long now_epoch);
// the page and the comparison, where Python and the scripts are
void make_report(const State& s);

}  // namespace kbench::campaign
