// hook.hpp — the boot hook on the machine: installed at start (recorded in
// the state before any file is written), removed at the end or at stop,
// and the hand-over: start leaves the campaign to the hook at once, so
// that the terminal it was typed in (an SSH session that drops) does not
// matter.
#pragma once

#include <string>

#include "driver/campaign.hpp"

namespace kbench::campaign {

// "systemd" or "initd" for this machine (--hook auto).
std::string hook_kind_here();

// Records the hook's files in s (the caller saves s before calling
// install_hook), then writes them: the program copied to a system path,
// the unit or init script. Throws Failure.
void plan_hook(State& s, const std::string& kind);
void install_hook(const State& s);
// Removes what plan_hook recorded (and reloads systemd's units).
void remove_hook(State& s);

// Starts `resume STATE` detached from this terminal: through systemd
// (systemctl start --no-block), else in a new session with SIGHUP ignored,
// its output on the console and in the campaign's log.
void hand_over(const State& s);

}  // namespace kbench::campaign
