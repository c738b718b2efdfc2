// main.cpp — kbench-campaign: boot each kernel in turn, in a balanced order,
// one kbench-run per step, each on a kexec boot of its own, and resume
// after every boot (issues 42 and 59).
//
//   kbench-campaign start [options] KERNEL KERNEL... [-- KBENCH-RUN-OPTIONS]
//   kbench-campaign resume STATE      (what the boot hook runs)
//   kbench-campaign home STATE        (what the hook's failure runs)
//   kbench-campaign stop | status | report
//
// The plan, the state and its transitions are pure (driver/campaign.hpp,
// campaign_boot.hpp, campaign_hook.hpp: unit-tested); this file drives them,
// and files.cpp, machine.cpp, hook.cpp and run.cpp do what touches the
// machine. Linked statically with the suite (make STATIC=1), it needs
// nothing else on the machine: no kexec-tools, no Python (the page and the
// comparison at the end are made where Python is).
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "campaign/evidence.hpp"
#include "campaign/files.hpp"
#include "campaign/hook.hpp"
#include "campaign/machine.hpp"
#include "campaign/run.hpp"
#include "campaign/settle.hpp"
#include "campaign/watchdog.hpp"
#include "driver/campaign.hpp"
#include "driver/campaign_boot.hpp"
#include "driver/campaign_hook.hpp"
#include "driver/sha256.hpp"
#include "harness/internal/usage_error.hpp"

namespace kc = kbench::campaign;
using kbench::UsageError;
using namespace kbench::campaign;

namespace {

const char kUsage[] =
    "usage: kbench-campaign start [options] KERNEL KERNEL... [-- KBENCH-RUN-OPTIONS...]\n"
    "       kbench-campaign resume STATE-FILE    (run by the boot hook; also after a Ctrl-C)\n"
    "       kbench-campaign home [STATE-FILE]    (run when the hook fails: a test boot reboots home)\n"
    "       kbench-campaign stop [--results DIR | STATE-FILE]\n"
    "       kbench-campaign status [--results DIR | STATE-FILE]\n"
    "       kbench-campaign report [--results DIR | STATE-FILE]\n"
    "\n"
    "Boots each KERNEL in turn with kexec_file_load, in a balanced order (A B B A A B ...),\n"
    "one kbench-run per step, each step on a kexec boot of its own, resuming after each\n"
    "boot through a hook it installs and removes (a systemd unit where systemd runs, else\n"
    "/etc/init.d/S99kbench-campaign; both run a copy of this program from /usr/local/sbin).\n"
    "start checks, installs the hook and leaves the campaign to it at once.\n"
    "KERNEL: an image path or an installed kernel's release (/boot/vmlinuz-RELEASE or the\n"
    "systemd-boot layout; its initrd by Debian's, Fedora's or SUSE's name), optionally\n"
    "followed by ,initrd=FILE (or ,initrd=none) and ,label=NAME. A kernel without an initrd\n"
    "is refused unless ,initrd=none says so.\n"
    "\n"
    "start options:\n"
    "  --rounds K       rounds: each kernel runs K times (default 2)\n"
    "  --results DIR    results root (default results); the campaign is DIR/campaign-ID/\n"
    "  --bin-dir DIR    where kbench-run is (default: this program's directory)\n"
    "  --append OPTS    extra kernel command-line options for every kexec'd kernel (the\n"
    "                   current command line is passed on without BOOT_IMAGE= and initrd=)\n"
    "  --initrd FILE    initrd of the kernels given as image paths without ,initrd= (none: without\n"
    "                   one; else the distribution's name beside the image or in /boot is taken)\n"
    "  --step-deadline S  a step still running after S seconds is killed and failed, and the\n"
    "                   machine goes home (default: 3 x --budget + 900, else 7200)\n"
    "  --watchdog W     auto (default: /dev/watchdog0 when its driver is loaded), none, or the\n"
    "                   module of a hardware watchdog to load at each boot (i6300esb, iTCO_wdt)\n"
    "  --watchdog-timeout S  the margin of a boot: from the kexec to the hook (default 300)\n"
    "  --label NAME     a name for the campaign (in its ID)\n"
    "  --hook KIND      auto (default), systemd, initd\n"
    "  --vm             run each step in a QEMU guest (scripts/vm-run), no kexec, no reboot:\n"
    "                   KERNEL is anything vm-run takes (image, .deb, package name)\n"
    "  --vm-arg ARG     one more option for scripts/vm-run (repeatable)\n"
    "  --repo DIR       the kbench tree: scripts/vm-run, report, compare (default: found\n"
    "                   from this program's path)\n"
    "  --python PATH    Python for the scripts (default /usr/bin/python3)\n"
    "  --dry-run        print the plan and the checks' outcome, change nothing\n"
    "  --help           this text\n"
    "\n"
    "Exit status: 0 finished, handed over to the hook, or rebooting to go on; 1 a failure;\n"
    "2 usage; 3 refused; 130 interrupted (nothing lost: resume goes on with the step that\n"
    "was cut).\n";

constexpr int kRefused = 3;

void on_signal(int sig) { g_signal = sig; }

std::string step_label(const State& s, int step) {
  return "step " + std::to_string(step + 1) + "/" + std::to_string(s.steps.size());
}

// Each step's kbench-run writes its messages here (DIR/logs/step-NN-K.log).
std::string step_log(const State& s, int step) {
  char name[64];
  std::snprintf(name, sizeof name, "/logs/step-%02d-%c.log", step + 1, char('A' + s.steps.at(std::size_t(step)).kernel));
  return s.dir + name;
}

// ---- the loop: from any state to the end ---------------------------------

int drive(State& s, bool interactive) {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  const int lock = lock_dir(s.dir, false);
  if (lock < 0) throw Refused{"another kbench-campaign process drives " + s.dir + " (pid " + std::to_string(s.pid) + ")"};
  s = load(s.dir + "/campaign.json");  // under the lock: the latest
  log_to(s.dir + "/campaign.log");
  if (s.status != "running") {
    say("campaign " + s.id + " is " + s.status + ": nothing to do");
    return 0;
  }
  s.pid = getpid();
  Now now = machine_now();
  std::vector<int> running;  // steps a crash may have cut: their boot's log is kept too
  for (std::size_t i = 0; i < s.steps.size(); ++i)
    if (s.steps[i].status == "running" && s.steps[i].boot_id != now.boot_id) running.push_back(int(i));
  const Findings found = reconcile(s, now);
  for (const auto& line : found.said) say(line);
  save(s);
  if (s.mode == "host" && (found.failed_step >= 0 || !running.empty())) {
    char name[64];
    if (found.failed_step >= 0)
      std::snprintf(name, sizeof name, "step-%02d-boot-%d", found.failed_step + 1, found.failed_attempt);
    else
      std::snprintf(name, sizeof name, "step-%02d-run-%d", running[0] + 1, s.steps[std::size_t(running[0])].runs);
    const std::string kept = keep_evidence(s, name);
    say(kept.empty() ? "the previous boot left no kernel log or pstore record here (no persistent journal, no pstore)"
                     : "what the previous boot left: " + kept);
  }
  if (s.mode == "host" && s.watchdog_s > 0) say("watchdog: " + watchdog_take(s));
  for (;;) {
    now = machine_now();
    const Action a = next_action(s, now);
    if (a.kind == ActionKind::finish) {
      mark_finished(s, "finished", now);
      remove_hook(s);
      watchdog_disarm();
      let_logins_in();
      save(s);
      std::fputs(describe(s, iso_epoch(now.time)).c_str(), stderr);
      make_report(s);
      if (a.go_home) {
        say("back to the default kernel: rebooting");
        reboot_now(false);
      }
      return 0;
    }
    const auto& k = s.kernels[std::size_t(a.kernel)];
    if (a.kind == ActionKind::boot) {
      const int attempt = s.steps[std::size_t(a.step)].boots + 1;
      const std::string marker = boot_marker(s, a.step, attempt);
      const std::string cmdline = boot_cmdline(k, marker);
      say(step_label(s, a.step) + ": kexec into " + kernel_name(s, a.kernel) + " (" + k.release +
          (attempt > 1 ? ", boot " + std::to_string(attempt) : "") + "), command line: " + cmdline);
      std::string why = image_change(k, kbench::driver::sha256_file(k.image).value_or(""),
                                     k.initrd.empty() ? "" : kbench::driver::sha256_file(k.initrd).value_or(""));
      if (why.empty()) why = kexec_load(k, cmdline);
      if (!why.empty()) {
        say("kernel " + kernel_name(s, a.kernel) + ": failed: " + why);
        mark_boot_failed(s, a.kernel, why);
        save(s);
        continue;
      }
      mark_boot_requested(s, a.step, marker, now);
      save(s);
      sync();
      if (k.watchdog) {
        watchdog_arm(s.watchdog_s);
      } else if (s.watchdog_s > 0) {
        say("kernel " + kernel_name(s, a.kernel) + " has no driver for the watchdog: its boot goes without it");
        watchdog_disarm();  // else it would reset that boot in the middle of its step
      }
      reboot_now(true);
    }
    // run
    const auto argv = step_argv(s, a.kernel);
    mkdir((s.dir + "/logs").c_str(), 0755);
    if (s.mode == "host") {
      keep_logins_off(s);
      const std::string settled = settle(s);
      say(step_label(s, a.step) + ": the boot settled: " + settled);
      s.steps[std::size_t(a.step)].settle = settled;
      now = machine_now();
    }
    say(step_label(s, a.step) + ": " + kernel_name(s, a.kernel) + ": " + quoted(argv) + " (its messages: " +
        step_log(s, a.step) + ")");
    mark_step_running(s, a.step, now);
    save(s);
    RunOptions o;
    o.err_file = step_log(s, a.step);
    o.deadline_s = s.deadline_s;
    o.tick = watchdog_ping;
    Ran r = run_child(argv, o);
    now = machine_now();
    if (g_signal && !r.timed_out) {
      mark_step_interrupted(s, a.step);
      save(s);
      say(std::string("interrupted: the step runs again at the next resume (") +
          (interactive ? "kbench-campaign resume " + s.dir + "/campaign.json, or make campaign-stop" : "next boot") + ")");
      return 130;
    }
    std::string reason;
    const bool made_run = !r.timed_out && !r.last_line.empty() && is_file(r.last_line + "/meta.json");
    if (r.timed_out)
      reason = "still running after its deadline of " + std::to_string(s.deadline_s) + " s: killed" +
               (s.mode == "host" ? "; the machine went home" : "");
    else if (!made_run || (r.status != 0 && r.status != 1))
      reason = (s.mode == "vm" ? "scripts/vm-run" : "kbench-run") + std::string(" exit status ") +
               std::to_string(r.status) + (made_run ? "" : ", no run directory");
    sync();  // the run's files on the disk before the state says it is done
    mark_step_ended(s, a.step, r.status, made_run ? r.last_line : "", reason, now);
    if (s.mode == "vm" && r.status == 3) mark_boot_failed(s, a.kernel, "no run came back from the guest (vm-run exit 3)");
    save(s);  // then said: a line "done" on the console means the state has it
    say(step_label(s, a.step) + ": " + (reason.empty() ? "done: " + r.last_line : "failed: " + reason));
    if (r.timed_out && s.mode == "host") {
      // a step that never ends may be a kernel that hangs: the firmware's reboot, not a kexec
      say("past the deadline: back to the default kernel, the campaign goes on from there");
      kexec_unload();
      watchdog_arm(s.watchdog_s);
      reboot_now(false);
    }
  }
}

// ---- start ---------------------------------------------------------------

struct StartArgs {
  int rounds = 2;
  std::string results = "results", bin_dir, append, initrd, label, hook = "auto", repo, python = "/usr/bin/python3";
  int deadline_s = 0;  // 0: from the budget (default_deadline_s)
  std::string watchdog = "auto";
  int watchdog_s = 300;
  bool vm = false, dry = false;
  std::vector<std::string> vm_args, kernels, run_args;
};

StartArgs parse_start(const std::vector<std::string>& args) {
  StartArgs a;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& o = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw UsageError{o + ": missing value"};
      return args[++i];
    };
    if (o == "--") {
      a.run_args.assign(args.begin() + long(i) + 1, args.end());
      break;
    } else if (o == "--rounds") {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 1000) throw UsageError{"--rounds: expected an integer in 1..1000, got '" + v + "'"};
      a.rounds = int(n);
    } else if (o == "--step-deadline") {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 7 * 86400)
        throw UsageError{"--step-deadline: expected seconds in 1..604800, got '" + v + "'"};
      a.deadline_s = int(n);
    } else if (o == "--watchdog-timeout") {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 30 || n > 3600)
        throw UsageError{"--watchdog-timeout: expected seconds in 30..3600, got '" + v + "'"};
      a.watchdog_s = int(n);
    } else if (o == "--watchdog") a.watchdog = value();
    else if (o == "--results") a.results = value();
    else if (o == "--bin-dir") a.bin_dir = value();
    else if (o == "--append") a.append = value();
    else if (o == "--initrd") a.initrd = value();
    else if (o == "--label") a.label = value();
    else if (o == "--hook") {
      a.hook = value();
      if (a.hook != "auto" && a.hook != "systemd" && a.hook != "initd")
        throw UsageError{"--hook: expected auto, systemd or initd, got '" + a.hook + "'"};
    } else if (o == "--vm") a.vm = true;
    else if (o == "--vm-arg") a.vm_args.push_back(value());
    else if (o == "--repo") a.repo = value();
    else if (o == "--python") a.python = value();
    else if (o == "--dry-run") a.dry = true;
    else if (o.rfind("-", 0) == 0) throw UsageError{"unknown option '" + o + "'"};
    else a.kernels.push_back(o);
  }
  if (a.kernels.size() > 26) throw UsageError{"at most 26 kernels (A to Z)"};
  if (a.kernels.size() < 2) throw UsageError{"give at least two kernels (KERNELS=\"A B ...\"): the first is the baseline"};
  for (char c : a.label)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      throw UsageError{"--label: only letters, digits and . _ - are allowed, got '" + a.label + "'"};
  for (const auto& r : a.run_args)
    if (r == "--out" || r.rfind("--out=", 0) == 0 || r == "--resume" || r == "--label")
      throw UsageError{"kbench-run option " + r + ": the campaign sets it itself"};
  return a;
}

void resolve(Kernel& k, const StartArgs& a, const Probe& probe) {
  if (a.vm) {  // vm-run's to check; a file by its absolute path (a resume may run elsewhere)
    k.image = is_file(k.spec) ? absolute(k.spec) : k.spec;
    return;
  }
  if (is_dir(k.spec)) throw UsageError{"kernel " + k.spec + ": a directory, not a kernel image"};
  const bool path = k.spec.find('/') != std::string::npos || is_file(k.spec);
  if (path) {
    k.image = absolute(k.spec);
    if (k.initrd.empty() && !k.no_initrd) {
      if (a.initrd == "none") k.no_initrd = true;
      else k.initrd = a.initrd;
    }
  } else {  // an installed release: where its distribution (or systemd-boot) keeps it
    const auto candidates = image_candidates(k.spec, trim(probe.read_file("/etc/machine-id").value_or("")));
    k.image = candidates.front();
    for (const auto& c : candidates)
      if (probe.is_file(c)) {
        k.image = c;
        break;
      }
  }
  if (probe.is_file(k.image)) {
    std::ifstream f(k.image, std::ios::binary);
    std::string head(0x10000, '\0');
    f.read(&head[0], long(head.size()));
    head.resize(static_cast<std::size_t>(f.gcount()));
    auto rel = image_release_from_bytes(head);
    if (!rel) throw UsageError{"kernel " + k.spec + ": " + k.image + " is not an x86 kernel image (no boot header 'HdrS')"};
    k.release = *rel;
    k.version = image_version_from_bytes(head).value_or("");
    k.sha256 = kbench::driver::sha256_file(k.image).value_or("");
  }
  if (k.initrd.empty() && !k.no_initrd)
    for (const auto& c : initrd_candidates(k.image, k.release.empty() || path ? k.release : k.spec))
      if (probe.is_file(c)) {
        k.initrd = c;
        break;
      }
  if (!k.initrd.empty()) k.initrd = absolute(k.initrd);
  if (!k.initrd.empty() && probe.is_file(k.initrd)) k.initrd_sha256 = kbench::driver::sha256_file(k.initrd).value_or("");
}

int start(const std::vector<std::string>& args) {
  StartArgs a = parse_start(args);
  const Probe probe = machine_probe();
  State s;
  s.mode = a.vm ? "vm" : "host";
  s.rounds = a.rounds;
  for (const auto& spec : a.kernels) {
    Kernel k = parse_kernel_spec(spec);
    resolve(k, a, probe);
    s.kernels.push_back(k);
  }
  if (!a.vm)
    for (std::size_t i = 0; i < s.kernels.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (!s.kernels[i].release.empty() && s.kernels[i].release == s.kernels[j].release &&
            s.kernels[i].label == s.kernels[j].label)
          throw UsageError{"kernels " + s.kernels[j].spec + " and " + s.kernels[i].spec + " are both release " +
                           s.kernels[i].release + ": give them different labels (,label=NAME) so that every "
                           "report tells them apart"};
  const Now now = machine_now();
  const std::string cmdline = trim(probe.read_file("/proc/cmdline").value_or(""));
  std::string watchdog_plan;
  if (!a.vm) {
    BootSafety safety;
    if (a.watchdog != "none") {
      const WatchdogSeen w = watchdog_seen(a.watchdog == "auto" ? "" : a.watchdog);
      const std::string unfit = watchdog_unfit(w, a.watchdog_s);
      if (unfit.empty()) {
        s.watchdog = w.device.empty() ? "/dev/watchdog0" : w.device;
        s.watchdog_module = w.module;
        s.watchdog_s = a.watchdog_s;
        safety.watchdog_open_s = a.watchdog_s;
        watchdog_plan = s.watchdog + " (" + (w.identity.empty() ? "driver " + w.module : w.identity) +
                        (w.module.empty() ? "" : ", module " + w.module) + "), armed across each kexec with " +
                        std::to_string(a.watchdog_s) + " s: a boot that hangs before its hook is reset into the default kernel";
        for (std::size_t i = 0; i < s.kernels.size(); ++i) {
          auto& k = s.kernels[i];
          const std::string mods = "/lib/modules/" + k.release + "/";
          k.watchdog = w.module.empty() ||
                       modules_have(probe.read_file(mods + "modules.dep").value_or(""),
                                    probe.read_file(mods + "modules.builtin").value_or(""), w.module);
          if (!k.watchdog)
            watchdog_plan += "; not kernel " + std::string(1, char('A' + i)) + "'s boots: no " + w.module + " in " + mods;
        }
      } else if (a.watchdog != "auto") {
        throw Refused{"--watchdog " + a.watchdog + ": " + unfit};
      } else {
        watchdog_plan = "none (" + unfit + "): a boot that hangs before its hook waits for a person; a hardware "
                        "watchdog (iTCO, IPMI; i6300esb in a guest) is recommended";
      }
    } else {
      watchdog_plan = "none (--watchdog none)";
    }
    // a serial console too, where the machine has a UART and the line names no console
    if (!has_console(cmdline)) safety.serial = serial_console(probe.read_file("/proc/tty/driver/serial"));
    s.safety = safety_args(safety);
    for (auto& k : s.kernels) k.cmdline = kexec_cmdline(cmdline, s.safety, a.append);
  }
  for (int k : balanced_order(int(s.kernels.size()), a.rounds)) {
    Step p;
    p.kernel = k;
    s.steps.push_back(p);
  }
  char stamp[32];
  time_t t = time(nullptr);
  tm g;
  gmtime_r(&t, &g);
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &g);
  s.id = std::string(stamp) + (a.label.empty() ? "" : "-" + a.label);
  const std::string results = absolute(a.results);
  s.dir = results + "/campaign-" + s.id;
  s.bin_dir = absolute(a.bin_dir.empty() ? self_dir() : a.bin_dir);
  s.repo = a.repo.empty() ? find_repo() : absolute(a.repo);
  s.python = a.python;
  s.run_args = a.run_args;
  s.vm_args = a.vm_args;
  s.append = a.append;
  s.deadline_s = a.deadline_s > 0 ? a.deadline_s : default_deadline_s(a.run_args);
  s.created = now.time;
  s.home_release = now.release;
  s.home_boot_id = now.boot_id;
  if (!a.vm) s.boots.push_back(Boot{-1, now.release, now.boot_id, now.time, "the default kernel: the campaign began", -1, 0, ""});
  const std::string hook = a.vm ? "" : a.hook == "auto" ? hook_kind_here() : a.hook;

  // the plan
  std::ostringstream plan;
  plan << "campaign " << s.id << ": " << s.kernels.size() << " kernels, " << a.rounds << " rounds, "
       << s.steps.size() << " steps (" << (a.vm ? "each in a QEMU guest through scripts/vm-run" : "kexec, on this machine") << ")\n";
  for (std::size_t i = 0; i < s.kernels.size(); ++i) {
    const auto& k = s.kernels[i];
    plan << "  " << char('A' + i) << " = " << k.spec;
    if (!a.vm) plan << "\n      image " << k.image << (k.release.empty() ? "" : " (release " + k.release + ")")
                    << "\n      initrd " << (k.initrd.empty() ? (k.no_initrd ? "none (initrd=none)" : "none found") : k.initrd)
                    << "\n      command line: " << k.cmdline;
    if (!k.label.empty()) plan << "\n      label " << k.label;
    plan << "\n";
  }
  plan << "  order:";
  for (const auto& p : s.steps) plan << " " << char('A' + p.kernel);
  if (!a.vm) {
    plan << "\n  kexec boots: " << s.steps.size()
         << " (one per step, the first included; a boot that fails is tried once more), then a reboot into the "
            "default kernel ("
         << now.release << ")";
    plan << "\n  every test boot gets: " << s.safety << " (then KERNEL_ARGS) and its marker kbench.campaign=" << s.id
         << ":STEP:ATTEMPT, checked with /proc/cmdline and /proc/version";
  }
  plan << "\n  each step: " << quoted(step_argv(s, 0)) << "\n";
  plan << "  deadline of a step: " << s.deadline_s << " s" << (a.vm ? "" : ", then the machine goes home") << "\n";
  if (!a.vm) plan << "  watchdog: " << watchdog_plan << "\n";
  if (a.rounds % 2) plan << "  note: an odd number of rounds; a linear drift cancels over pairs of rounds only\n";
  if (!a.vm)
    plan << "  boot hook: " << (hook == "systemd" ? std::string("systemd unit ") + kHookUnit + " (on failure " + kHomeUnit + ")"
                                                  : std::string("init script ") + kInitScript)
         << ", running " << kHookExe << "\n";
  plan << "  state: " << s.dir << "/campaign.json\n";
  std::fputs(plan.str().c_str(), stdout);
  std::fflush(stdout);

  for (const auto& w : start_warnings(probe, s)) say("warning: " + w);
  Probe checks = probe;
  if (!a.vm && fake_root().empty() && trim(read_text("/sys/kernel/kexec_loaded").value_or("0")) == "1") {
    if (a.dry) {
      say("an image is loaded for kexec already (kexec -l?): the dry run skips the trial loads, which would replace it");
      checks.trial_load = [](const Kernel&) { return 0; };
    } else {
      say("warning: an image was loaded for kexec already (kexec -l?): the campaign's trial loads replace it");
    }
  }
  std::string why = start_refusal(checks, s, running_campaign(results));
  if (why.empty() && !a.vm && openrc_runs())
    why = "this machine runs OpenRC, which never runs /etc/init.d/S99 scripts: the boot hook would not run "
          "(a systemd, sysvinit or busybox machine can run a campaign; make vm-campaign runs anywhere)";
  if (why.empty() && !a.vm && hook == "systemd" && !systemd_runs())
    why = "--hook systemd: systemd does not run here";
  if (a.dry) {
    if (!why.empty()) say("it would be refused: " + why);
    return why.empty() ? 0 : kRefused;
  }
  if (!why.empty()) throw Refused{why};
  if (a.vm && !is_file(s.repo + "/scripts/vm-run")) throw Refused{"no scripts/vm-run under " + s.repo + " (--repo)"};
  if (!a.vm && !is_file(s.bin_dir + "/kbench-run")) throw Refused{"no kbench-run in " + s.bin_dir + " (--bin-dir)"};
  mkdir(results.c_str(), 0755);
  if (a.vm) {
    if (mkdir(s.dir.c_str(), 0755) != 0) throw Failure{"cannot create " + s.dir + ": " + std::strerror(errno)};
    log_to(s.dir + "/campaign.log");
    save(s);
    return drive(s, true);
  }
  // From the first file written to the hand-over, neither a terminal that
  // hangs up (an SSH session that drops) nor a Ctrl-C can leave a campaign
  // half-installed, running with nothing to drive it.
  signal(SIGHUP, SIG_IGN);
  sigset_t hold, before;
  sigemptyset(&hold);
  sigaddset(&hold, SIGINT);
  sigaddset(&hold, SIGTERM);
  sigprocmask(SIG_BLOCK, &hold, &before);
  if (mkdir(s.dir.c_str(), 0755) != 0) throw Failure{"cannot create " + s.dir + ": " + std::strerror(errno)};
  log_to(s.dir + "/campaign.log");
  save(s);
  // the tests' fake machine: DIR/start_pause holds start here that long, so
  // that a test can hang up its terminal in the middle of it
  if (!fake_root().empty()) sleep(unsigned(std::atoi(read_text(fake_root() + "/start_pause").value_or("0").c_str())));
  plan_hook(s, hook);
  save(s);  // the hook's files recorded before any is written: a crash half-way leaves none unknown
  try {
    install_hook(s);
  } catch (const Failure& e) {
    say(e.message + ": the hook is removed again");
    remove_hook(s);
    mark_finished(s, "stopped", now);
    save(s);
    throw;
  }
  say("boot hook installed: " + s.hook_files[s.hook_files.size() - 2] + ", running " + kHookExe);
  hand_over(s);
  sigprocmask(SIG_SETMASK, &before, nullptr);
  say("the campaign goes on by itself now, in its hook (this terminal may close): follow it with " +
      std::string(hook == "systemd" ? "journalctl -u kbench-campaign -f, " : "") + "tail -f " + s.dir +
      "/campaign.log, or make campaign-status");
  return 0;
}

// The state file a command names: STATE-FILE or DIR, else the latest (or
// the running) campaign under --results (default results), else the one
// the installed boot hook names (a campaign started from another directory).
std::string state_arg(const std::vector<std::string>& args, bool want_running) {
  std::string results = "results";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--results") {
      if (i + 1 >= args.size()) throw UsageError{"--results: missing value"};
      results = args[++i];
    } else if (args[i].rfind("-", 0) == 0) {
      throw UsageError{"unknown option '" + args[i] + "'"};
    } else {
      return is_dir(args[i]) ? args[i] + "/campaign.json" : args[i];
    }
  }
  std::string hooked;
  for (const char* f : {kHookUnit, kInitScript})
    if (hooked.empty()) hooked = hook_state_path(read_text(fake_root() + f).value_or(""));
  if (want_running) {
    const std::string r = running_campaign(results);
    if (!r.empty()) return r;
    if (!hooked.empty() && is_file(hooked)) return hooked;
    throw Refused{"no campaign is running under " + results + (hooked.empty() ? ", and no boot hook is installed" : "")};
  }
  auto all = campaigns(results);
  if (all.empty()) {
    if (!hooked.empty() && is_file(hooked)) return hooked;
    throw Refused{"no campaign under " + results};
  }
  return all.back();
}

// The processes of a campaign's steps still running (kbench-run writing
// under its directory), found in /proc.
std::vector<pid_t> step_processes(const State& s) {
  std::vector<pid_t> out;
  if (DIR* d = opendir("/proc")) {
    while (const dirent* e = readdir(d)) {
      const pid_t pid = std::atoi(e->d_name);
      if (pid <= 0 || pid == getpid()) continue;
      std::string cmd = read_text("/proc/" + std::string(e->d_name) + "/cmdline").value_or("");
      for (auto& c : cmd)
        if (c == '\0') c = ' ';
      if (cmd.find("--out " + s.dir + "/") != std::string::npos) out.push_back(pid);
    }
    closedir(d);
  }
  return out;
}

int stop(const std::vector<std::string>& args) {
  const std::string path = state_arg(args, true);
  State s = load(path);
  const Probe probe = machine_probe();
  if (s.mode == "host" && probe.euid() != 0) throw Refused{"needs root: it removes the boot hook and reboots"};
  if (s.pid > 0 && s.pid != getpid() && kill(pid_t(s.pid), 0) == 0) {
    auto comm = read_text("/proc/" + std::to_string(s.pid) + "/comm");
    if (comm && comm->rfind("kbench-campaign", 0) == 0) {
      say("stopping the running campaign process " + std::to_string(s.pid));
      kill(pid_t(s.pid), SIGTERM);
    }
  }
  // it ends its step as interrupted and lets go; one stuck in the kernel is killed
  int lock = -1;
  for (int t = 0; t < 60 && (lock = lock_dir(s.dir, false)) < 0; ++t) sleep(1);
  if (lock < 0) {
    say("the campaign process did not end in 60 s: killing it and its steps");
    if (s.pid > 0) kill(pid_t(s.pid), SIGKILL);
    for (pid_t p : step_processes(s)) kill(p, SIGKILL);
    for (int t = 0; t < 10 && (lock = lock_dir(s.dir, false)) < 0; ++t) sleep(1);
    if (lock < 0) throw Failure{"another process still holds the lock on " + s.dir + "; the campaign is not stopped"};
  }
  s = load(path);
  log_to(s.dir + "/campaign.log");
  Now now = machine_now();
  reconcile(s, now);
  for (auto& p : s.steps)
    if (p.status == "pending") p.reason = "not run: the campaign was stopped" + (p.reason.empty() ? "" : " (" + p.reason + ")");
  mark_finished(s, "stopped", now);
  remove_hook(s);
  if (s.mode == "host") {
    watchdog_disarm();
    let_logins_in();
  }
  if (s.mode == "host" && fake_root().empty()) kexec_unload();
  save(s);
  std::fputs(describe(s, iso_epoch(now.time)).c_str(), stderr);
  say("stopped; the boot hook is removed");
  if (s.mode == "host" && in_campaign_boot(s, now)) {
    say("back to the default kernel: rebooting");
    reboot_now(false);
  }
  return 0;
}

// What the hook's failure runs (OnFailure=, the init script's ||): the
// hook could not go on (a mount that never came, an unreadable state, a
// full disk). In a test boot the machine goes home, where a person can
// reach it; in the default kernel's boot it stays, and the hook with it,
// so that the campaign goes on once the cause is mended.
int home(const std::vector<std::string>& args) {
  if (args.size() > 1) throw UsageError{"home: at most the campaign's state file"};
  const Now now = machine_now();
  std::optional<State> s;
  if (!args.empty()) {
    try {
      s = load(args[0]);
    } catch (const Failure& e) {
      say(e.message);
    }
  }
  if (s) {
    log_to(s->dir + "/campaign.log");
    const int lock = lock_dir(s->dir, false);
    if (lock < 0) {
      say("another kbench-campaign process drives " + s->dir + ": nothing to do");
      return 0;
    }
    if (s->status != "running") {  // a hook left behind by a campaign that ended
      say("campaign " + s->id + " is " + s->status + ": its hook is removed");
      remove_hook(*s);
      save(*s);
      return 0;
    }
  }
  watchdog_disarm();  // the next boot's hook may fail again: no watchdog to reset it over and over
  bool test_boot = false;
  std::istringstream words(now.cmdline);
  for (std::string w; words >> w;) test_boot = test_boot || w.rfind("kbench.campaign=", 0) == 0;
  if (test_boot) {
    say("the campaign's hook failed in a test boot: back to the default kernel (the hook runs again there)");
    kexec_unload();
    reboot_now(false);
  }
  say("the campaign's hook failed in the default kernel's boot: the machine stays here, the hook too; mend the "
      "cause (its messages above, or journalctl -u kbench-campaign), then kbench-campaign resume " +
      (args.empty() ? std::string("STATE") : args[0]) + ", or end it: kbench-campaign stop");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      std::fputs(kUsage, args.empty() ? stderr : stdout);
      return args.empty() ? 2 : 0;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    for (const auto& a : args)
      if (a == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      }
    if (cmd == "start") return start(args);
    if (cmd == "resume") {
      if (args.size() != 1) throw UsageError{"resume: give the campaign's state file (results/campaign-ID/campaign.json)"};
      State s = load(args[0]);
      return drive(s, isatty(2));
    }
    if (cmd == "home") return home(args);
    if (cmd == "stop") return stop(args);
    if (cmd == "status") {
      std::fputs(describe(load(state_arg(args, false)), time(nullptr)).c_str(), stdout);
      return 0;
    }
    if (cmd == "report") {
      const std::string path = absolute(state_arg(args, false));
      State s = load(path);
      // Copied from the machine it ran on (a guest, a lab box): its paths
      // moved with it; the scripts and Python are this machine's.
      const std::string here = path.substr(0, path.rfind('/'));
      if (s.dir != here) {
        for (auto& p : s.steps)
          if (p.run_dir.rfind(s.dir + "/", 0) == 0) p.run_dir = here + p.run_dir.substr(s.dir.size());
        s.dir = here;
      }
      if (s.repo.empty() || !is_file(s.repo + "/scripts/report")) s.repo = find_repo();
      if (!is_file(s.python)) s.python = "/usr/bin/python3";
      std::fputs(describe(s, time(nullptr)).c_str(), stdout);
      make_report(s);
      return 0;
    }
    throw UsageError{"unknown command '" + cmd + "' (start, resume, home, stop, status, report)"};
  } catch (const UsageError& e) {
    say(e.message);
    std::fputs("(kbench-campaign --help: the options)\n", stderr);
    return 2;
  } catch (const Refused& e) {
    say("refused: " + e.message);
    return kRefused;
  } catch (const Failure& e) {
    say(e.message);
    return 1;
  } catch (const std::exception& e) {
    say(e.what());
    return 1;
  }
}
