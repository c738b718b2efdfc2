// settle.cpp — a step starts when its boot is over and the machine quiet
// (settle.hpp).
#include "campaign/settle.hpp"

#include <dirent.h>
#include <sys/timex.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "campaign/files.hpp"
#include "campaign/machine.hpp"
#include "campaign/run.hpp"
#include "campaign/watchdog.hpp"
#include "driver/campaign_boot.hpp"

namespace kbench::campaign {

namespace {

constexpr int kSettleWaitS = 600;  // the longest each wait lasts: then the step goes on, and says so

Ran systemctl(const std::vector<std::string>& args, int deadline_s = 60) {
  std::vector<std::string> argv = {which("systemctl")};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions o;
  o.deadline_s = deadline_s;
  o.tick = watchdog_ping;
  return run_child(argv, o);
}

std::vector<std::string> process_names() {
  std::vector<std::string> out;
  const std::string proc = fake_root() + "/proc";
  if (DIR* d = opendir(proc.c_str())) {
    while (const dirent* e = readdir(d))
      if (std::atoi(e->d_name) > 0) out.push_back(trim(read_text(proc + "/" + e->d_name + "/comm").value_or("")));
    closedir(d);
  }
  return out;
}

std::string settle_systemd() {
  std::string said;
  const Ran up = systemctl({"is-system-running", "--wait"}, kSettleWaitS);
  said = up.timed_out ? "the boot still starting after " + std::to_string(kSettleWaitS) + " s"
                      : "system " + (up.last_line.empty() ? std::string("state unknown") : up.last_line);
  const auto timers = timer_units(systemctl({"list-units", "--type=timer", "--state=active", "--plain", "--no-legend"}).out);
  std::vector<std::string> started;
  for (const auto& t : timers) {
    systemctl({"stop", t});
    const std::string unit = trim(systemctl({"show", "-p", "Unit", "--value", t}).out);
    if (!unit.empty()) started.push_back(unit);
  }
  if (!timers.empty()) said += "; " + std::to_string(timers.size()) + " timers stopped for this boot";
  for (const auto& u : started) {  // what they started already (apt at boot: Persistent=) ends first
    int waited = 0;
    while (waited < kSettleWaitS) {
      const std::string state = trim(systemctl({"is-active", u}).out);
      if (state != "active" && state != "activating" && state != "deactivating") break;
      sleep(1);
      watchdog_ping();
      ++waited;
    }
    if (waited > 0) said += "; waited " + std::to_string(waited) + " s for " + u;
  }
  return said;
}

std::string settle_clock() {
  const std::string daemon = time_daemon(process_names());
  if (daemon.empty()) return "no clock daemon runs: nothing slews the clock";
  const long hz = sysconf(_SC_CLK_TCK);
  for (int waited = 0;; ++waited) {
    timex tx{};
    const int st = adjtimex(&tx);
    if (clock_settled(st, tx.status, tx.tick, hz))
      return "the clock synchronised by " + daemon + (waited ? " after " + std::to_string(waited) + " s" : "");
    if (waited >= kSettleWaitS)
      return "the clock still not synchronised by " + daemon + " after " + std::to_string(waited) + " s";
    sleep(1);
    watchdog_ping();
  }
}

}  // namespace

std::string settle(const State& s) {
  (void)s;
  std::string said = systemd_runs() ? settle_systemd()
                                    : "init script: the hook is rc's last script (every other one has run)";
  return said + "; " + settle_clock();
}

void keep_logins_off(const State& s) {
  try {
    write_file(fake_root() + "/run/nologin",
               "kbench campaign " + s.id + " is measuring this machine (a kernel of its own): logins wait "
               "until it ends; root may log in (kbench-campaign status, stop).\n",
               0644);
  } catch (const Failure& e) {
    say("warning: " + e.message);
  }
}

void let_logins_in() { unlink((fake_root() + "/run/nologin").c_str()); }

}  // namespace kbench::campaign
