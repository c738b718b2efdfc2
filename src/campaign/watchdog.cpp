// watchdog.cpp — the hardware watchdog across each kexec (watchdog.hpp). On
// the tests' fake machine the device is a file under the fake root and each
// action is a line in DIR/watchdog-log.
#include "campaign/watchdog.hpp"

#include <fcntl.h>
#include <linux/watchdog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "campaign/files.hpp"
#include "campaign/run.hpp"

namespace kbench::campaign {

namespace {

const char kWatchdogClass[] = "/sys/class/watchdog/watchdog0";
int g_wd_fd = -1;

void fake_note(const std::string& what) {
  if (fake_root().empty()) return;
  const int fd = open((fake_root() + "/watchdog-log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  const std::string line = what + "\n";
  if (write(fd, line.data(), line.size()) < 0) {
    // a test's note only
  }
  close(fd);
}

std::string sys_text(const std::string& path) { return trim(read_text(fake_root() + path).value_or("")); }

std::string link_base(const std::string& path) {
  char buf[4096];
  const ssize_t n = readlink((fake_root() + path).c_str(), buf, sizeof buf - 1);
  if (n <= 0) return "";
  const std::string t(buf, static_cast<std::size_t>(n));
  return t.substr(t.rfind('/') + 1);
}

bool modprobe(const std::vector<std::string>& args) {
  if (!fake_root().empty()) {
    std::string line = "modprobe";
    for (const auto& a : args) line += " " + a;
    fake_note(line);
    return true;
  }
  const std::string mp = which("modprobe");
  if (mp.empty()) return false;
  std::vector<std::string> argv = {mp};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions o;
  o.deadline_s = 60;
  return run_child(argv, o).status == 0;
}

std::string device_path() { return fake_root() + "/dev/watchdog0"; }

}  // namespace

WatchdogSeen watchdog_seen(const std::string& module) {
  WatchdogSeen w;
  if (is_dir(fake_root() + kWatchdogClass)) {
    w.device = "/dev/watchdog0";
    w.identity = sys_text(std::string(kWatchdogClass) + "/identity");
    w.module = link_base(std::string(kWatchdogClass) + "/device/driver/module");
    w.max_timeout = std::atoi(sys_text(std::string(kWatchdogClass) + "/max_timeout").c_str());
  }
  if (w.module.empty()) w.module = module;
  return w;
}

std::string watchdog_take(const State& s) {
  if (s.watchdog_s <= 0 || g_wd_fd >= 0) return "";
  std::string said;
  if (!is_dir(fake_root() + kWatchdogClass) && !s.watchdog_module.empty()) {
    // its driver is a module not loaded in this boot: load it, the core told to keep it across a kexec
    modprobe({"watchdog", "stop_on_reboot=0"});
    if (!modprobe({s.watchdog_module})) said = "cannot load the watchdog's driver (modprobe " + s.watchdog_module + "); ";
  }
  const std::string keep = sys_text("/sys/module/watchdog/parameters/stop_on_reboot");
  if (keep != "0" && !s.watchdog_module.empty() && is_file(fake_root() + "/sys/module/watchdog/initstate")) {
    // loaded at boot with the core's default (stop it at a reboot, a kexec
    // too): reloaded, where nothing holds the device
    const int probe = open(device_path().c_str(), O_WRONLY | O_CLOEXEC);
    if (probe >= 0) {
      if (write(probe, "V", 1) < 0) {
        // the magic close failed: the reload below stops it all the same
      }
      close(probe);
      modprobe({"-r", s.watchdog_module});
      modprobe({"-r", "watchdog"});
      modprobe({"watchdog", "stop_on_reboot=0"});
      modprobe({s.watchdog_module});
      said += "its modules reloaded with stop_on_reboot=0; ";
    }
  }
  const std::string now_keep = sys_text("/sys/module/watchdog/parameters/stop_on_reboot");
  if (now_keep != "0")
    said += "this kernel's watchdog core stops it at a reboot (stop_on_reboot " +
            (now_keep.empty() ? std::string("unknown") : now_keep) + "): the kexec from this boot is not covered; ";
  g_wd_fd = open(device_path().c_str(), O_WRONLY | O_CLOEXEC);
  if (g_wd_fd < 0) return said + "cannot open " + s.watchdog + ": " + std::strerror(errno);
  watchdog_arm(s.watchdog_s);
  return said + "taken: " + s.watchdog + ", " + std::to_string(s.watchdog_s) + " s";
}

void watchdog_ping() {
  if (g_wd_fd < 0) return;
  if (fake_root().empty()) ioctl(g_wd_fd, WDIOC_KEEPALIVE, 0);
}

void watchdog_arm(int seconds) {
  if (g_wd_fd < 0) return;
  fake_note("arm " + std::to_string(seconds));
  if (!fake_root().empty()) return;
  int t = seconds;
  if (ioctl(g_wd_fd, WDIOC_SETTIMEOUT, &t) != 0) say(std::string("watchdog: cannot set its timeout: ") + std::strerror(errno));
  ioctl(g_wd_fd, WDIOC_KEEPALIVE, 0);
}

void watchdog_disarm() {
  if (g_wd_fd < 0 && access(device_path().c_str(), W_OK) == 0)
    g_wd_fd = open(device_path().c_str(), O_WRONLY | O_CLOEXEC);  // not taken in this process: the device itself
  if (g_wd_fd < 0) return;
  fake_note("disarm");
  if (write(g_wd_fd, "V", 1) < 0) say(std::string("watchdog: the magic close failed: ") + std::strerror(errno));
  close(g_wd_fd);
  g_wd_fd = -1;
}

}  // namespace kbench::campaign
