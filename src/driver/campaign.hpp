// campaign.hpp — a campaign: several kernels, each booted in turn, in a
// balanced order (A B B A A B ...), one kbench-run per step (issue 42).
//
// This header is the pure part: the plan, the state (one JSON file under
// results/ that survives reboots), what to do next given the state and the
// boot we are in, and the refusals, all as functions of their inputs so that
// the unit tests (tests/harness/unit/test_campaign.cpp) can walk every step,
// every crash and every refusal without root, kexec or a reboot. The system
// side (kexec_file_load, reboot, the boot hook, running kbench-run) is in
// src/campaign/ (files, machine, hook, run, main).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "driver/json_value.hpp"

namespace kbench::campaign {

// One kernel of the campaign, as given ("SPEC[,initrd=FILE][,label=NAME]")
// and as resolved (image, initrd, the release its image says it is).
struct Kernel {
  std::string spec;     // as given: an image path or an installed release
  std::string image;    // the image file (host mode); the spec itself (vm mode)
  std::string initrd;   // "" = none
  bool no_initrd = false;  // ,initrd=none: booted without one on purpose (else a missing one is refused)
  bool watchdog = false;   // its boots can take the campaign's watchdog (its driver is in its modules)
  std::string label;    // kbench-run --label for its runs ("" = none)
  std::string release;  // expected `uname -r` after booting it ("" = unknown: vm mode)
  // the image's whole version string (its boot header: release, builder,
  // build number and date), checked against /proc/version after the boot:
  // two builds of one release differ here
  std::string version;
  std::string cmdline;  // the command line it is booted with (host mode)
  // SHA-256 of the image and the initrd when the campaign began: a kexec of
  // a file that changed since (a package upgrade rewrote /boot) is refused
  std::string sha256, initrd_sha256;
  std::string status = "ok";  // ok | failed
  std::string reason;         // why failed
};

struct Step {
  int kernel = 0;                 // index into kernels
  std::string status = "pending"; // pending | running | done | failed
  std::string reason;             // failed: why
  std::string run_dir;            // done: the run directory kbench-run printed
  int exit_code = -1;             // kbench-run's (or vm-run's) exit status
  std::string boot_id;            // the boot it ran in
  std::string started, ended;     // UTC ISO times
  int boots = 0;                  // kexec boots asked for it (its ATTEMPT in the marker)
  int boot_failures = 0;          // of them, those that did not come (a second one fails the kernel)
  int runs = 0;                   // times it started (one cut by a crash runs once more)
  std::string settle;             // what its boot was waited for before it started
};

struct Boot {                     // one boot the campaign saw (or asked for)
  int kernel = -1;                // -1: the default kernel (home)
  std::string release, boot_id, at, note;
  int step = -1;                  // the step it was booted for (-1: none)
  int attempt = 0;                // which boot of that step (1, 2)
  std::string marker;             // the word on its command line that proves it
};

struct State {
  std::string id;
  std::string mode = "host";      // host (kexec) | vm (scripts/vm-run)
  std::string status = "running"; // running | finished | stopped
  std::string created, ended;
  std::string dir;                // the campaign's directory (absolute): results/campaign-ID
  std::string bin_dir;            // where kbench-run is
  std::string repo;               // the kbench tree (scripts/report, scripts/compare, scripts/vm-run)
  std::string python = "/usr/bin/python3";
  std::vector<std::string> run_args;  // kbench-run's options for every step
  std::vector<std::string> vm_args;   // vm mode: scripts/vm-run's options
  std::string append;             // the extra command-line options, explicit
  std::string safety;             // what every test boot gets besides (safety_args: panic=, ...)
  int deadline_s = 7200;          // a step running longer is killed and failed; the machine goes home
  // the hardware watchdog armed across each kexec ("" none): its device,
  // its driver's module (loaded at a boot that lacks it), its timeout
  std::string watchdog, watchdog_module;
  int watchdog_s = 0;
  int rounds = 0;
  std::string home_release, home_boot_id;  // the default kernel and the boot the campaign began in
  std::vector<Kernel> kernels;
  std::vector<Step> steps;
  std::optional<Boot> pending_boot;        // a kexec asked for, not yet seen
  std::vector<Boot> boots;
  std::string hook_kind;                   // systemd | initd | "" (none)
  std::vector<std::string> hook_files;
  long pid = 0;                            // the process driving it now
};

// ---- the plan ------------------------------------------------------------

// Kernel indices for `rounds` rounds of n kernels: forwards in even rounds,
// backwards in odd ones (A B | B A | A B ...). Over every two rounds each
// kernel's mean position is the same, so a drift linear in time cancels.
std::vector<int> balanced_order(int n, int rounds);

// "SPEC[,initrd=FILE|none][,label=NAME]"; throws UsageError on a bad option.
Kernel parse_kernel_spec(const std::string& text);

// The release in an x86 boot image's header ("HdrS" at 0x202, the version
// string at 0x200 + the u16 at 0x20E): its first word; nullopt when the
// bytes are not an x86 boot image.
std::optional<std::string> image_release_from_bytes(const std::string& head);

// The whole version string in an x86 boot header ("6.12.117+deb12-cloud-amd64
// (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian ..."):
// nullopt when the bytes are not an x86 boot image, "" when it has none.
std::optional<std::string> image_version_from_bytes(const std::string& head);

// Whether /proc/version ("Linux version R (BY@HOST) (COMPILER) UTS_VERSION")
// is the kernel whose boot header says "R (BY@HOST) UTS_VERSION": the same
// release, builder and build (number, flags, date). An image version of the
// release alone is compared by release.
bool version_matches(const std::string& image_version, const std::string& proc_version);

// "" when the image and initrd still have the digests recorded at start
// (an empty digest now: the file is gone or unreadable), else why not.
std::string image_change(const Kernel& k, const std::string& image_sha256, const std::string& initrd_sha256);

// A step's deadline when none is given: three times kbench-run's --budget
// and a quarter of an hour (its first pass may outlast the budget), else
// two hours.
int default_deadline_s(const std::vector<std::string>& run_args);

// ---- the state file ------------------------------------------------------

driver::JsonValue state_to_json(const State& s);
// Throws std::runtime_error naming what is wrong.
State state_from_json(const driver::JsonValue& j);

// ---- what next -----------------------------------------------------------

struct Now {
  std::string release;   // uname -r
  std::string boot_id;   // /proc/sys/kernel/random/boot_id
  std::string time;      // UTC ISO
  std::string cmdline;   // /proc/cmdline
  std::string version;   // /proc/version
};

// A failed boot is tried once more before its kernel is failed; a step cut
// by a crash, a power loss or a reboot runs once more before it is failed.
constexpr int kMaxBootAttempts = 2;
constexpr int kMaxRuns = 2;

// The word on the command line of the boot for a step (0-based) that proves
// this boot is that one: "kbench.campaign=ID:STEP:ATTEMPT" (STEP 1-based).
// A dotted word is a module parameter to the kernel: ignored, never passed
// to init.
std::string boot_marker(const State& s, int step, int attempt);

// The command line of that boot: the kernel's own, then the marker.
std::string boot_cmdline(const Kernel& k, const std::string& marker);

struct Findings {
  std::vector<std::string> said;  // one line per finding
  int failed_step = -1;           // a boot asked for that did not come: its step
  int failed_attempt = 0;         //   and which attempt it was
};

// Folds what this boot tells into the state. A kexec asked for is checked
// by its marker on /proc/cmdline and the image's version in /proc/version:
// both there, it is recorded; else (a panic, a hang the watchdog reset, a
// reboot through the firmware, no reboot at all) that attempt failed: the
// step is booted once more, and after a second failure its kernel is
// failed. A step left "running" (the machine crashed or lost power during
// it) runs once more, then is failed. A boot not asked for is recorded.
Findings reconcile(State& s, const Now& now);

enum class ActionKind { run, boot, finish };
struct Action {
  ActionKind kind;
  int step = -1;     // run: the step; boot: the step it is for
  int kernel = -1;   // run/boot: the kernel
  bool go_home = false;  // finish: reboot into the default kernel first
};

// The step this boot was kexec'd for and proved to be (reconcile), -1 for
// none: the boot the campaign began in, the default kernel after a
// failure, a boot nobody asked for.
int booted_step(const State& s, const Now& now);

// Whether this boot is one the campaign kexec'd into (confirmed, or
// carrying one of its markers): the end then reboots into the default kernel.
bool in_campaign_boot(const State& s, const Now& now);

// After reconcile: the next action. Every step runs on a fresh boot made for
// it (host mode), the first included: a step runs only in the boot kexec'd
// for it and not yet used by it; else that boot is asked for. Steps of a
// failed kernel are marked failed on the way (never run).
Action next_action(State& s, const Now& now);

// Transitions, each a small edit of the state (saved by the caller).
// The boot for `step` with `marker` (boot_marker of its next attempt).
void mark_boot_requested(State& s, int step, const std::string& marker, const Now& now);
void mark_boot_failed(State& s, int kernel, const std::string& reason);  // the kernel and its steps
void mark_step_running(State& s, int step, const Now& now);
void mark_step_ended(State& s, int step, int exit_code, const std::string& run_dir, const std::string& reason,
                     const Now& now);
// back to pending: it runs again, on a new boot, unless it ran kMaxRuns times
void mark_step_interrupted(State& s, int step);
void mark_finished(State& s, const std::string& status, const Now& now);

// "C (/boot/vmlinuz-6.12, label patched)": a kernel in messages.
std::string kernel_name(const State& s, int kernel);

// Summary counts "N done, M failed, P pending".
std::string step_counts(const State& s);

// Seconds since the epoch of a UTC ISO time ("2026-01-02T03:04:05Z"), -1
// when it is not one.
long iso_epoch(const std::string& iso);

// "ETA: about 2 h 10 min (13 steps left at 10 min a step so far, boots
// included)": the time per step so far, boots and failures included, times
// the steps left.
std::string eta_text(const State& s, long now_epoch);

// ---- refusals ------------------------------------------------------------

// What the checks read, injectable: the real machine, or a fake one in tests.
struct Probe {
  std::function<unsigned()> euid;
  std::function<std::optional<std::string>(const std::string&)> read_file;  // nullopt: missing
  std::function<bool(const std::string&)> is_file;
  std::function<bool(const std::string&)> is_dir;  // read as read_file is (a fake root in tests)
  // kexec_file_load(KEXEC_FILE_UNLOAD)'s errno, 0 when it works
  std::function<int()> kexec_probe;
  // a trial kexec_file_load of the kernel (then unloaded): its errno, 0 when it loads
  std::function<int(const Kernel&)> trial_load;
};

// "" when the machine can boot kernels with kexec_file_load, else why not.
std::string kexec_refusal(const Probe& p);
// "" or why the campaign cannot start: root, kexec, the images, an initrd
// missing without ,initrd=none, another campaign (`running` names a running
// campaign's state file, "" for none), then a trial load of every kernel
// (the real test: a signature under lockdown, the image's format).
std::string start_refusal(const Probe& p, const State& s, const std::string& running);

// What the plan warns about without refusing: a kernel whose modules are
// not installed (/lib/modules/RELEASE).
std::vector<std::string> start_warnings(const Probe& p, const State& s);

}  // namespace kbench::campaign
