// machine.cpp — what kbench-campaign does to the machine (machine.hpp).
#include "campaign/machine.hpp"

#include <fcntl.h>
#include <linux/reboot.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "campaign/files.hpp"
#include "campaign/run.hpp"
#include "driver/campaign_boot.hpp"

#ifndef KEXEC_FILE_UNLOAD
#define KEXEC_FILE_UNLOAD 0x00000001
#endif
#ifndef KEXEC_FILE_NO_INITRAMFS
#define KEXEC_FILE_NO_INITRAMFS 0x00000004
#endif

namespace kbench::campaign {

namespace {

// kexec_file_load of the kernel with `cmdline`: 0, or its errno (the
// image or initrd that cannot be opened: that errno).
int load_image(const Kernel& k, const std::string& cmdline) {
  const int kfd = open(k.image.c_str(), O_RDONLY | O_CLOEXEC);
  if (kfd < 0) return errno;
  int ifd = -1;
  unsigned long flags = 0;
  if (k.initrd.empty()) {
    flags |= KEXEC_FILE_NO_INITRAMFS;
  } else if ((ifd = open(k.initrd.c_str(), O_RDONLY | O_CLOEXEC)) < 0) {
    const int e = errno;
    close(kfd);
    return e;
  }
  const long r = syscall(SYS_kexec_file_load, kfd, ifd, cmdline.size() + 1, cmdline.c_str(), flags);
  const int e = r == 0 ? 0 : errno;
  close(kfd);
  if (ifd >= 0) close(ifd);
  return e;
}

// At start, before anything reboots: the real test of whether this kernel
// will kexec the image (a signature under lockdown, its format), with the
// command line it will get. Nothing stays loaded.
int trial_load(const Kernel& k) {
  const int e = load_image(k, boot_cmdline(k, "kbench.campaign=trial:0:0"));
  if (e == 0) kexec_unload();
  return e;
}

}  // namespace

void kexec_unload() { syscall(SYS_kexec_file_load, -1, -1, 0UL, nullptr, KEXEC_FILE_UNLOAD); }

Probe machine_probe() {
  Probe p;
  const std::string fake = fake_root();
  if (fake.empty()) {
    p.euid = [] { return static_cast<unsigned>(geteuid()); };
    p.read_file = [](const std::string& path) { return read_text(path); };
    p.kexec_probe = [] {
      // An image loaded already (kexec -l): kexec works, and the probe below would unload it.
      if (trim(read_text("/sys/kernel/kexec_loaded").value_or("0")) == "1") return 0;
      const long r = syscall(SYS_kexec_file_load, -1, -1, 0UL, nullptr, KEXEC_FILE_UNLOAD);
      return r == 0 ? 0 : errno;
    };
  } else {
    p.euid = [fake] {
      auto t = read_text(fake + "/euid");
      return t ? static_cast<unsigned>(std::atoi(t->c_str())) : 0u;
    };
    p.read_file = [fake](const std::string& path) { return read_text(fake + path); };
    p.kexec_probe = [fake] {
      const std::string t = trim(read_text(fake + "/kexec_probe").value_or("0"));
      return t == "ENOSYS" ? ENOSYS : t == "EPERM" ? EPERM : t == "0" ? 0 : EINVAL;
    };
  }
  p.is_file = is_file;
  p.is_dir = [fake](const std::string& path) { return is_dir(fake + path); };
  if (fake.empty()) {
    p.trial_load = [](const Kernel& k) { return trial_load(k); };
  } else {
    // DIR/kexec_load: lines "SUBSTRING ERRNO-NAME": an image whose path holds
    // SUBSTRING is refused with that errno; any other loads.
    p.trial_load = [fake](const Kernel& k) {
      std::istringstream in(read_text(fake + "/kexec_load").value_or(""));
      std::string part, name;
      while (in >> part >> name)
        if (k.image.find(part) != std::string::npos)
          for (int e = 1; e < 200; ++e)
            if (errno_name(e) == name) return e;
      return 0;
    };
  }
  return p;
}

Now machine_now() {
  const std::string fake = fake_root();
  Now n;
  utsname u;
  uname(&u);
  n.release = u.release;
  if (!fake.empty())
    if (auto r = read_text(fake + "/release")) n.release = trim(*r);
  n.boot_id = trim(read_text(fake + "/proc/sys/kernel/random/boot_id").value_or(""));
  n.cmdline = trim(read_text(fake + "/proc/cmdline").value_or(""));
  n.version = trim(read_text(fake + "/proc/version").value_or(""));
  n.time = now_iso();
  return n;
}

// Loads the kernel for the next boot with `cmdline`; "" or why not.
std::string kexec_load(const Kernel& k, const std::string& cmdline) {
  if (!fake_root().empty()) return "";  // the tests' fake machine loads nothing
  const int e = load_image(k, cmdline);
  if (e == 0) return "";
  return "kexec_file_load refused it: " +
         load_refusal(e, read_text("/sys/kernel/security/lockdown").value_or(""));
}


// (the tests' fake machine runs "systemd" when DIR/run/systemd/system is there: its systemctl is DIR/bin/systemctl)
bool systemd_runs() { return is_dir(fake_root() + "/run/systemd/system"); }

// OpenRC runs its own services and /etc/local.d, never /etc/init.d/S99 scripts.
bool openrc_runs() { return !systemd_runs() && (is_dir(fake_root() + "/run/openrc") || is_file(fake_root() + "/sbin/openrc")); }

namespace {

// The shutdown's last steps, done here: every other process ended, every
// file system synced and remounted read-only (innermost first), so that
// reboot(2) loses nothing and no journal needs replaying.
void quiesce() {
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  sync();
  kill(-1, SIGTERM);
  sleep(2);
  kill(-1, SIGKILL);
  sleep(1);
  sync();
  std::vector<std::string> mounts;
  std::istringstream in(read_text("/proc/self/mounts").value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    std::string dev, dir;
    if (w >> dev >> dir) mounts.push_back(dir);
  }
  for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) mount(nullptr, it->c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr);
  sync();
}

[[noreturn]] void hard_reboot(bool kexec) {
  say(std::string("the machine's own ") + (kexec ? "kexec" : "reboot") +
      ": every process ended, the file systems synced and read-only, then reboot(2)");
  log_to("");
  quiesce();
  reboot(kexec ? LINUX_REBOOT_CMD_KEXEC : LINUX_REBOOT_CMD_RESTART);
  const int e = errno;
  say(std::string("reboot(2) failed: ") + std::strerror(e));
  std::exit(1);
}

void exit_at_once(int) { _exit(0); }

}  // namespace

[[noreturn]] void reboot_now(bool kexec) {
  if (!fake_root().empty()) {  // the tests' fake machine never reboots: it notes it in DIR/reboots
    say(std::string("fake machine: would ") + (kexec ? "kexec" : "reboot") + " now");
    const int fd = open((fake_root() + "/reboots").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      const std::string line = kexec ? "kexec\n" : "reboot\n";
      if (write(fd, line.data(), line.size()) < 0) std::perror("reboots");
      close(fd);
    }
    std::exit(0);
  }
  sync();
  std::vector<std::string> how;
  int grace_s = 180;
  if (systemd_runs() && !which("systemctl").empty()) {
    // a clean shutdown: systemd stops every unit (this one too: at its
    // SIGTERM this process ends at once, so that the shutdown does not wait
    // for it) and kexecs the image loaded, or reboots
    how = {which("systemctl"), "--no-block", kexec ? "kexec" : "reboot"};
  } else if (!kexec && !which("reboot").empty()) {
    how = {which("reboot")};  // init's own shutdown (sysvinit, busybox)
    grace_s = 20;
  }
  if (!how.empty()) {
    struct sigaction sa{};
    sa.sa_handler = exit_at_once;
    sigaction(SIGTERM, &sa, nullptr);
    RunOptions o;
    o.deadline_s = 60;
    const Ran r = run_child(how, o);
    if (r.status == 0) {
      for (int t = 0; t < grace_s; ++t) sleep(1);
      say("no shutdown after " + std::to_string(grace_s) + " s");
    } else {
      say(quoted(how) + " failed (exit " + std::to_string(r.status) + ")");
    }
    signal(SIGTERM, SIG_IGN);
  }
  hard_reboot(kexec);
}

}  // namespace kbench::campaign
