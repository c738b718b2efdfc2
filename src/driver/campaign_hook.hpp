// campaign_hook.hpp — the boot hook's files, as text (issue 59): what runs
// `kbench-campaign resume STATE` at every boot of a campaign, and what
// brings the machine home when it cannot. Pure, unit-tested; written to
// the machine by src/campaign/hook.cpp.
//
// The hook runs a copy of the (static) program from a system path, not the
// user's tree: make clean, a rebuild, a space in the path or SELinux (a
// service may not run a program from a home directory) cannot break it.
// Under systemd the unit waits for the mounts of the checkout
// (RequiresMountsFor=), and its failure (a mount that never came, an
// unreadable state, a disk full) starts the home unit, which reboots a
// test boot into the default kernel. The init script does the same with ||.
#pragma once

#include <string>
#include <vector>

namespace kbench::campaign {

inline const char kHookExe[] = "/usr/local/sbin/kbench-campaign-hook";
inline const char kHookUnit[] = "/etc/systemd/system/kbench-campaign.service";
inline const char kHomeUnit[] = "/etc/systemd/system/kbench-campaign-home.service";
inline const char kHookUnitLink[] = "/etc/systemd/system/multi-user.target.wants/kbench-campaign.service";
inline const char kInitScript[] = "/etc/init.d/S99kbench-campaign";
inline const char kRcLink[] = "/etc/rc2.d/S99kbench-campaign";

// A word of a unit file in double quotes: \ and " escaped, % doubled (a
// specifier otherwise), and in ExecStart= $ doubled (a variable otherwise).
std::string systemd_quote(const std::string& s, bool exec_line);
// A word for sh in single quotes.
std::string shell_quote(const std::string& s);

// kbench-campaign.service: resume STATE at every boot, after the mounts of
// `mounts` (the campaign's directory, kbench-run's), home on failure.
std::string hook_unit(const std::string& id, const std::string& exe, const std::string& state,
                      const std::vector<std::string>& mounts);
// kbench-campaign-home.service: what the hook's failure starts.
std::string home_unit(const std::string& id, const std::string& exe, const std::string& state);
// /etc/init.d/S99kbench-campaign: resume, else home.
std::string init_script(const std::string& id, const std::string& exe, const std::string& state);

// The files of a hook of `kind` (systemd | initd), in the order they are
// removed (links first, the program last); recorded in the state before
// any is written, so that a crash half-way leaves none unrecorded.
std::vector<std::string> hook_files(const std::string& kind, bool rc2d);

// The state file a hook's text names ("# state: PATH"), "" for none.
std::string hook_state_path(const std::string& hook_text);

}  // namespace kbench::campaign
