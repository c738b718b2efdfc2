// main.cpp — kbench-campaign: boot each kernel in turn, in a balanced order,
// one kbench-run per step, and resume after every boot (issue 42).
//
//   kbench-campaign start [options] KERNEL KERNEL... [-- KBENCH-RUN-OPTIONS]
//   kbench-campaign resume STATE      (what the boot hook runs)
//   kbench-campaign stop | status | report
//
// The plan, the state and its transitions are pure (driver/campaign.hpp,
// unit-tested); this file does what touches the machine: kexec_file_load and
// reboot, the boot hook (a systemd unit, else an init script), the state
// file written atomically, kbench-run (or scripts/vm-run) for each step.
// Linked statically with the suite (make STATIC=1), it needs nothing else
// on the machine: no kexec-tools, no Python (the page and the comparison
// at the end are made where Python is).
#include <dirent.h>
#include <fcntl.h>
#include <linux/reboot.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/campaign.hpp"
#include "driver/sha256.hpp"
#include "harness/internal/usage_error.hpp"

#ifndef KEXEC_FILE_UNLOAD
#define KEXEC_FILE_UNLOAD 0x00000001
#endif
#ifndef KEXEC_FILE_NO_INITRAMFS
#define KEXEC_FILE_NO_INITRAMFS 0x00000004
#endif

namespace kc = kbench::campaign;
using kbench::UsageError;
using kbench::driver::json_dump;
using kbench::driver::json_parse;

namespace {

const char kUsage[] =
    "usage: kbench-campaign start [options] KERNEL KERNEL... [-- KBENCH-RUN-OPTIONS...]\n"
    "       kbench-campaign resume STATE-FILE    (run by the boot hook; also after a Ctrl-C)\n"
    "       kbench-campaign stop [--results DIR]\n"
    "       kbench-campaign status [--results DIR | STATE-FILE]\n"
    "       kbench-campaign report [--results DIR | STATE-FILE]\n"
    "\n"
    "Boots each KERNEL in turn with kexec_file_load, in a balanced order (A B B A A B ...),\n"
    "one kbench-run per step, resuming after each boot through a hook it installs and\n"
    "removes (a systemd unit where systemd runs, else /etc/init.d/S99kbench-campaign).\n"
    "KERNEL: an image path or an installed kernel's release (/boot/vmlinuz-RELEASE and\n"
    "/boot/initrd.img-RELEASE), optionally followed by ,initrd=FILE and ,label=NAME.\n"
    "\n"
    "start options:\n"
    "  --rounds K       rounds: each kernel runs K times (default 2)\n"
    "  --results DIR    results root (default results); the campaign is DIR/campaign-ID/\n"
    "  --bin-dir DIR    where kbench-run is (default: this program's directory)\n"
    "  --append OPTS    extra kernel command-line options for every kexec'd kernel (the\n"
    "                   current command line is passed on without BOOT_IMAGE= and initrd=)\n"
    "  --initrd FILE    initrd of the kernels given as image paths without ,initrd=\n"
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
    "Exit status: 0 finished (or rebooting to go on), 1 a failure, 2 usage, 3 refused,\n"
    "130 interrupted (nothing lost: resume goes on with the step that was cut).\n";

constexpr int kRefused = 3;

void say(const std::string& m) { std::fprintf(stderr, "kbench-campaign: %s\n", m.c_str()); std::fflush(stderr); }

struct Refused { std::string message; };
struct Failure { std::string message; };

volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

std::string now_iso() {
  time_t t = time(nullptr);
  tm g;
  gmtime_r(&t, &g);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &g);
  return buf;
}

long iso_epoch(const std::string& s) {
  tm g{};
  if (s.empty() || !strptime(s.c_str(), "%Y-%m-%dT%H:%M:%SZ", &g)) return -1;
  return static_cast<long>(timegm(&g));
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream o;
  o << f.rdbuf();
  return o.str();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

bool is_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string absolute(const std::string& p) {
  char buf[PATH_MAX];
  if (realpath(p.c_str(), buf)) return buf;
  if (!p.empty() && p[0] == '/') return p;
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + p : p;
}

std::string self_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string exe(buf, static_cast<std::size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}

// The kbench tree this program was built in: the first directory above it
// holding scripts/report (build/bin/.. /.., build/static/bin/../../..).
std::string find_repo() {
  std::string d = self_dir();
  for (int i = 0; i < 4 && !d.empty(); ++i) {
    if (is_file(d + "/scripts/report")) return d;
    d = d.substr(0, d.rfind('/'));
  }
  return "";
}

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "kbench-campaign";
}

// ---- the machine, real or (tests only) fake ------------------------------

// KBENCH_CAMPAIGN_FAKE_ROOT=DIR (the tests' alone): /proc and /sys are read
// under DIR, the euid is DIR/euid, kexec's probe answers DIR/kexec_probe
// (0, ENOSYS, EPERM); nothing is ever loaded, booted or installed.
std::string fake_root() {
  const char* f = std::getenv("KBENCH_CAMPAIGN_FAKE_ROOT");
  return f ? f : "";
}

kc::Probe machine_probe() {
  kc::Probe p;
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
  return p;
}

kc::Now machine_now() {
  const std::string fake = fake_root();
  kc::Now n;
  utsname u;
  uname(&u);
  n.release = u.release;
  n.boot_id = trim(read_text(fake + "/proc/sys/kernel/random/boot_id").value_or(""));
  n.cmdline = trim(read_text(fake + "/proc/cmdline").value_or(""));
  n.version = trim(read_text(fake + "/proc/version").value_or(""));
  n.time = now_iso();
  return n;
}

// ---- the state file ------------------------------------------------------

void fsync_dir(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

// Written to a temporary file beside it, flushed, then renamed over it: after
// a crash the file is the old state or the new one, never half of either.
void save(const kc::State& s) {
  const std::string path = s.dir + "/campaign.json";
  const std::string tmp = path + ".tmp";
  const std::string text = json_dump(kc::state_to_json(s), true) + "\n";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Failure{"cannot write " + tmp + ": " + std::strerror(errno)};
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t w = write(fd, text.data() + off, text.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      close(fd);
      throw Failure{"cannot write " + tmp + ": " + std::strerror(errno)};
    }
    off += static_cast<std::size_t>(w);
  }
  if (fsync(fd) != 0 || close(fd) != 0) throw Failure{"cannot write " + tmp + ": " + std::strerror(errno)};
  if (rename(tmp.c_str(), path.c_str()) != 0) throw Failure{"cannot rename " + tmp + ": " + std::strerror(errno)};
  fsync_dir(s.dir);
}

kc::State load(const std::string& path) {
  auto text = read_text(path);
  if (!text) throw Failure{path + ": cannot read: " + std::strerror(errno)};
  std::string err;
  auto j = json_parse(*text, &err);
  if (!j) throw Failure{path + ": not JSON (" + err + ")"};
  try {
    return kc::state_from_json(*j);
  } catch (const std::exception& e) {
    throw Failure{path + ": " + e.what()};
  }
}

// The state files of the campaigns under RESULTS, oldest first.
std::vector<std::string> campaigns(const std::string& results) {
  std::vector<std::string> out;
  if (DIR* d = opendir(results.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.rfind("campaign-", 0) == 0 && is_file(results + "/" + n + "/campaign.json"))
        out.push_back(results + "/" + n + "/campaign.json");
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string running_campaign(const std::string& results) {
  for (const auto& f : campaigns(results)) {
    try {
      if (load(f).status == "running") return f;
    } catch (const Failure&) {
    }
  }
  return "";
}

// One process drives a campaign at a time: a lock on its directory.
int lock_dir(const std::string& dir, bool wait) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw Failure{"cannot open " + dir + ": " + std::strerror(errno)};
  if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// ---- the boot hook -------------------------------------------------------

bool systemd_runs() { return is_dir("/run/systemd/system"); }

void write_file(const std::string& path, const std::string& text, mode_t mode) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!(f << text)) throw Failure{"cannot write " + tmp};
  }
  chmod(tmp.c_str(), mode);
  if (rename(tmp.c_str(), path.c_str()) != 0) throw Failure{"cannot write " + path + ": " + std::strerror(errno)};
}

void install_hook(kc::State& s, const std::string& kind) {
  const std::string cmd = self_exe() + " resume " + s.dir + "/campaign.json";
  s.hook_files.clear();
  if (kind == "systemd") {
    const std::string unit = "/etc/systemd/system/kbench-campaign.service";
    write_file(unit,
               "# Installed by kbench-campaign for campaign " + s.id + "; it removes this unit at the end.\n"
               "[Unit]\nDescription=kbench campaign " + s.id + " (resumes after each boot)\n"
               "After=local-fs.target network.target systemd-user-sessions.service\n\n"
               "[Service]\nType=simple\nExecStart=" + cmd + "\nTimeoutStartSec=infinity\n"
               "StandardOutput=journal+console\nStandardError=journal+console\n\n"
               "[Install]\nWantedBy=multi-user.target\n",
               0644);
    mkdir("/etc/systemd/system/multi-user.target.wants", 0755);
    const std::string link = "/etc/systemd/system/multi-user.target.wants/kbench-campaign.service";
    unlink(link.c_str());
    if (symlink(unit.c_str(), link.c_str()) != 0) throw Failure{"cannot link " + link + ": " + std::strerror(errno)};
    s.hook_files = {link, unit};
  } else {
    const std::string script = "/etc/init.d/S99kbench-campaign";
    mkdir("/etc/init.d", 0755);
    write_file(script,
               "#!/bin/sh\n# Installed by kbench-campaign for campaign " + s.id +
                   "; it removes this script at the end.\ncase \"$1\" in stop) exit 0 ;; esac\n" + cmd + "\n",
               0755);
    s.hook_files = {script};
    if (is_dir("/etc/rc2.d")) {  // sysvinit's runlevel links
      const std::string link = "/etc/rc2.d/S99kbench-campaign";
      unlink(link.c_str());
      if (symlink(script.c_str(), link.c_str()) == 0) s.hook_files.insert(s.hook_files.begin(), link);
    }
  }
  s.hook_kind = kind;
}

void remove_hook(kc::State& s) {
  for (const auto& f : s.hook_files)
    if (unlink(f.c_str()) != 0 && errno != ENOENT) say("warning: cannot remove " + f + ": " + std::strerror(errno));
  s.hook_files.clear();
  sync();
}

// ---- running a step ------------------------------------------------------

struct Ran {
  int status = -1;       // exit status, or 128+signal
  std::string last_line; // the last line of stdout (the run directory)
};

// argv with stdout captured (the run directory), stderr to ours; the child
// keeps our process group, so a terminal's Ctrl-C reaches it too.
Ran run_child(const std::vector<std::string>& argv, const std::string& out_file = "") {
  int pfd[2];
  if (pipe(pfd) != 0) throw Failure{std::string("pipe: ") + std::strerror(errno)};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Failure{std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    if (!out_file.empty()) {
      const int fd = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) dup2(fd, 1);
    } else {
      dup2(pfd[1], 1);
    }
    close(pfd[0]);
    close(pfd[1]);
    std::vector<char*> av;
    for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    execv(av[0], av.data());
    std::fprintf(stderr, "kbench-campaign: cannot run %s: %s\n", av[0], std::strerror(errno));
    _exit(127);
  }
  close(pfd[1]);
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(pfd[0], buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
    else if (n < 0 && errno == EINTR) {
      if (g_signal == SIGTERM) kill(pid, SIGTERM);  // campaign-stop signals us alone
      continue;
    } else break;
  }
  close(pfd[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) break;
    if (g_signal == SIGTERM) kill(pid, SIGTERM);
  }
  Ran r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (!trim(line).empty()) r.last_line = trim(line);
  return r;
}

// Each kernel's runs under their own root, DIR/A, DIR/B, ...: two kernels of
// one release (a patched build) never share a kernel directory.
std::string kernel_out(const kc::State& s, const kc::Kernel& k) {
  for (std::size_t i = 0; i < s.kernels.size(); ++i)
    if (&s.kernels[i] == &k) return s.dir + "/" + char('A' + i);
  return s.dir;
}

std::vector<std::string> step_argv(const kc::State& s, const kc::Kernel& k) {
  std::vector<std::string> a;
  if (s.mode == "vm") {
    a = {s.python, s.repo + "/scripts/vm-run", "--out", kernel_out(s, k)};
    if (!k.label.empty()) a.insert(a.end(), {"--label", k.label});
    a.insert(a.end(), s.vm_args.begin(), s.vm_args.end());
    a.push_back(k.image);
    a.push_back("--");
  } else {
    a = {s.bin_dir + "/kbench-run", "--out", kernel_out(s, k)};
    if (!k.label.empty()) a.insert(a.end(), {"--label", k.label});
  }
  a.insert(a.end(), s.run_args.begin(), s.run_args.end());
  return a;
}

std::string quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    bool plain = !a.empty();
    for (char c : a)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./=+:,@", c))) plain = false;
    out += (out.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
  }
  return out;
}

// ---- kexec ---------------------------------------------------------------

// Loads the kernel for the next boot with `cmdline`; "" or why not.
std::string kexec_load(const kc::Kernel& k, const std::string& cmdline) {
  if (!fake_root().empty()) return "";  // the tests' fake machine loads nothing
  const int kfd = open(k.image.c_str(), O_RDONLY | O_CLOEXEC);
  if (kfd < 0) return "cannot open " + k.image + ": " + std::strerror(errno);
  int ifd = -1;
  unsigned long flags = 0;
  if (k.initrd.empty()) {
    flags |= KEXEC_FILE_NO_INITRAMFS;
  } else if ((ifd = open(k.initrd.c_str(), O_RDONLY | O_CLOEXEC)) < 0) {
    const int e = errno;
    close(kfd);
    return "cannot open " + k.initrd + ": " + std::strerror(e);
  }
  const long r = syscall(SYS_kexec_file_load, kfd, ifd, cmdline.size() + 1, cmdline.c_str(), flags);
  const int e = errno;
  close(kfd);
  if (ifd >= 0) close(ifd);
  if (r != 0)
    return std::string("kexec_file_load refused it: ") + std::strerror(e) +
           (e == ENOEXEC ? " (not a kernel image this kernel can load)"
                         : e == EKEYREJECTED || e == EBADMSG ? " (signature check: unsigned image under lockdown?)" : "");
  return "";
}

[[noreturn]] void reboot_now(bool kexec) {
  if (!fake_root().empty()) {  // the tests' fake machine never reboots
    say(std::string("fake machine: would ") + (kexec ? "kexec" : "reboot") + " now");
    std::exit(0);
  }
  sync();
  if (systemd_runs() && fake_root().empty()) {
    // a clean shutdown; systemd kexecs the image already loaded
    const int rc = std::system(kexec ? "systemctl kexec" : "systemctl reboot");
    if (rc == 0) {
      for (;;) pause();
    }
    say("systemctl failed: rebooting directly");
    sync();
  }
  reboot(kexec ? LINUX_REBOOT_CMD_KEXEC : LINUX_REBOOT_CMD_RESTART);
  say(std::string("reboot failed: ") + std::strerror(errno));
  std::exit(1);
}

// ---- the report at the end -----------------------------------------------

void make_report(const kc::State& s) {
  if (s.repo.empty() || !is_file(s.python) || !is_file(s.repo + "/scripts/report")) {
    say("no Python or no kbench scripts here: make the page and the comparison where they are: "
        "kbench-campaign report " + s.dir + "/campaign.json (or make campaign-report CAMPAIGN=" + s.dir + ")");
    return;
  }
  std::vector<std::string> kdirs;  // each kernel's directory, the first kernel first
  for (std::size_t i = 0; i < s.kernels.size(); ++i) {
    std::string d;
    for (const auto& p : s.steps)
      if (p.kernel == int(i) && p.status == "done" && !p.run_dir.empty()) d = p.run_dir.substr(0, p.run_dir.rfind('/'));
    if (!d.empty() && std::find(kdirs.begin(), kdirs.end(), d) == kdirs.end()) kdirs.push_back(d);
    else if (d.empty()) say("kernel " + kc::kernel_name(s, int(i)) + ": no run to compare");
  }
  Ran r = run_child({s.python, s.repo + "/scripts/report", "--out", s.dir + "/index.html", s.dir});
  if (r.status != 0) say("scripts/report failed (exit " + std::to_string(r.status) + ")");
  else say("the page: " + s.dir + "/index.html");
  if (kdirs.size() < 2 || kdirs[0] != [&] {
        for (const auto& p : s.steps)
          if (p.kernel == 0 && p.status == "done") return p.run_dir.substr(0, p.run_dir.rfind('/'));
        return std::string();
      }()) {
    say("no comparison: the first kernel and at least one other need runs");
    return;
  }
  std::vector<std::string> cmp = {s.python, s.repo + "/scripts/compare"};
  cmp.insert(cmp.end(), kdirs.begin(), kdirs.end());
  r = run_child(cmp, s.dir + "/comparison.txt");
  if (r.status != 0) say("scripts/compare failed (exit " + std::to_string(r.status) + ")");
  else say("the comparison against " + s.kernels[0].spec + ": " + s.dir + "/comparison.txt");
}

// ---- status --------------------------------------------------------------

std::string describe(const kc::State& s) {
  std::ostringstream o;
  o << "campaign " << s.id << " (" << s.mode << "): " << s.status << "; steps " << kc::step_counts(s) << "\n";
  for (std::size_t i = 0; i < s.kernels.size(); ++i) {
    const auto& k = s.kernels[i];
    o << "  kernel " << char('A' + i) << ": " << k.spec << (k.label.empty() ? "" : ", label " + k.label) << (k.release.empty() ? "" : " (" + k.release + ")")
      << (k.status == "ok" ? "" : "  FAILED: " + k.reason) << "\n";
  }
  const long t0 = iso_epoch(s.created);
  for (const auto& b : s.boots) {
    const long t = iso_epoch(b.at);
    o << "  boot  " << b.at << (t0 >= 0 && t >= 0 ? "  +" + std::to_string(t - t0) + " s" : "") << "  "
      << (b.kernel >= 0 ? std::string(1, char('A' + b.kernel)) : std::string("default")) << " " << b.release << "  ("
      << b.note << ")\n";
  }
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const auto& p = s.steps[i];
    const long a = iso_epoch(p.started), b = iso_epoch(p.ended);
    o << "  step " << i + 1 << "  " << char('A' + p.kernel) << "  " << p.status;
    if (a >= 0 && b >= 0) o << "  " << (b - a) << " s" << (t0 >= 0 ? " (from +" + std::to_string(a - t0) + " s)" : "");
    if (!p.run_dir.empty()) o << "  " << p.run_dir;
    if (!p.reason.empty()) o << "  (" << p.reason << ")";
    o << "\n";
  }
  const long c = iso_epoch(s.created), e = iso_epoch(s.ended);
  if (c >= 0 && e >= 0) o << "  total " << (e - c) << " s\n";
  return o.str();
}

// ---- the loop: from any state to the end ---------------------------------

int drive(kc::State& s, bool interactive) {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  const int lock = lock_dir(s.dir, false);
  if (lock < 0) throw Refused{"another kbench-campaign process drives " + s.dir + " (pid " + std::to_string(s.pid) + ")"};
  s = load(s.dir + "/campaign.json");  // under the lock: the latest
  if (s.status != "running") {
    say("campaign " + s.id + " is " + s.status + ": nothing to do");
    return 0;
  }
  s.pid = getpid();
  kc::Now now = machine_now();
  for (const auto& line : kc::reconcile(s, now).said) say(line);
  save(s);
  for (;;) {
    now = machine_now();
    const kc::Action a = kc::next_action(s, now);
    if (a.kind == kc::ActionKind::finish) {
      kc::mark_finished(s, "finished", now);
      remove_hook(s);
      save(s);
      std::fputs(describe(s).c_str(), stderr);
      make_report(s);
      if (a.go_home) {
        say("back to the default kernel: rebooting");
        reboot_now(false);
      }
      return 0;
    }
    const auto& k = s.kernels[std::size_t(a.kernel)];
    if (a.kind == kc::ActionKind::boot) {
      const int attempt = s.steps[std::size_t(a.step)].boots + 1;
      const std::string marker = kc::boot_marker(s, a.step, attempt);
      const std::string cmdline = kc::boot_cmdline(k, marker);
      say("step " + std::to_string(a.step + 1) + "/" + std::to_string(s.steps.size()) + ": kexec into " + kc::kernel_name(s, a.kernel) +
          " (" + k.release + (attempt > 1 ? ", boot " + std::to_string(attempt) : "") + "), command line: " + cmdline);
      std::string why = kc::image_change(k, kbench::driver::sha256_file(k.image).value_or(""),
                                         k.initrd.empty() ? "" : kbench::driver::sha256_file(k.initrd).value_or(""));
      if (why.empty()) why = kexec_load(k, cmdline);
      if (!why.empty()) {
        say("kernel " + kc::kernel_name(s, a.kernel) + ": failed: " + why);
        kc::mark_boot_failed(s, a.kernel, why);
        save(s);
        continue;
      }
      kc::mark_boot_requested(s, a.step, marker, now);
      save(s);
      reboot_now(true);
    }
    // run
    const auto argv = step_argv(s, k);
    say("step " + std::to_string(a.step + 1) + "/" + std::to_string(s.steps.size()) + ": " + kc::kernel_name(s, a.kernel) + ": " + quoted(argv));
    kc::mark_step_running(s, a.step, now);
    save(s);
    Ran r = run_child(argv);
    now = machine_now();
    if (g_signal) {
      kc::mark_step_interrupted(s, a.step);
      save(s);
      say(std::string("interrupted: the step runs again at the next resume (") +
          (interactive ? "kbench-campaign resume " + s.dir + "/campaign.json, or make campaign-stop" : "next boot") + ")");
      return 130;
    }
    std::string reason;
    const bool made_run = !r.last_line.empty() && is_file(r.last_line + "/meta.json");
    if (!made_run || (r.status != 0 && r.status != 1))
      reason = (s.mode == "vm" ? "scripts/vm-run" : "kbench-run") + std::string(" exit status ") +
               std::to_string(r.status) + (made_run ? "" : ", no run directory");
    kc::mark_step_ended(s, a.step, r.status, made_run ? r.last_line : "", reason, now);
    if (s.mode == "vm" && r.status == 3) kc::mark_boot_failed(s, a.kernel, "no run came back from the guest (vm-run exit 3)");
    say("step " + std::to_string(a.step + 1) + ": " + (reason.empty() ? "done: " + r.last_line : "failed: " + reason));
    save(s);
  }
}

// ---- start ---------------------------------------------------------------

struct StartArgs {
  int rounds = 2;
  std::string results = "results", bin_dir, append, initrd, label, hook = "auto", repo, python = "/usr/bin/python3";
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
    } else if (o == "--results") a.results = value();
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

void resolve(kc::Kernel& k, const StartArgs& a, const kc::Probe& probe) {
  if (a.vm) {  // vm-run's to check; a file by its absolute path (a resume may run elsewhere)
    k.image = is_file(k.spec) ? absolute(k.spec) : k.spec;
    return;
  }
  if (is_dir(k.spec)) throw UsageError{"kernel " + k.spec + ": a directory, not a kernel image"};
  const bool path = k.spec.find('/') != std::string::npos || is_file(k.spec);
  if (path) {
    k.image = absolute(k.spec);
    if (k.initrd.empty()) k.initrd = a.initrd;
  } else {
    k.image = "/boot/vmlinuz-" + k.spec;
    if (k.initrd.empty() && is_file("/boot/initrd.img-" + k.spec)) k.initrd = "/boot/initrd.img-" + k.spec;
  }
  if (!k.initrd.empty()) k.initrd = absolute(k.initrd);
  if (probe.is_file(k.image)) {
    std::ifstream f(k.image, std::ios::binary);
    std::string head(0x10000, '\0');
    f.read(&head[0], long(head.size()));
    head.resize(static_cast<std::size_t>(f.gcount()));
    auto rel = kc::image_release_from_bytes(head);
    if (!rel) throw UsageError{"kernel " + k.spec + ": " + k.image + " is not an x86 kernel image (no boot header 'HdrS')"};
    k.release = *rel;
    k.version = kc::image_version_from_bytes(head).value_or("");
    k.sha256 = kbench::driver::sha256_file(k.image).value_or("");
  }
  if (!k.initrd.empty() && probe.is_file(k.initrd)) k.initrd_sha256 = kbench::driver::sha256_file(k.initrd).value_or("");
}

int start(const std::vector<std::string>& args) {
  StartArgs a = parse_start(args);
  const kc::Probe probe = machine_probe();
  kc::State s;
  s.mode = a.vm ? "vm" : "host";
  s.rounds = a.rounds;
  for (const auto& spec : a.kernels) {
    kc::Kernel k = kc::parse_kernel_spec(spec);
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
  const kc::Now now = machine_now();
  const std::string cmdline = trim(probe.read_file("/proc/cmdline").value_or(""));
  for (auto& k : s.kernels) if (!a.vm) k.cmdline = kc::kexec_cmdline(cmdline, a.append);
  for (int k : kc::balanced_order(int(s.kernels.size()), a.rounds)) {
    kc::Step p;
    p.kernel = k;
    s.steps.push_back(p);
  }
  char stamp[32];
  time_t t = time(nullptr);
  tm g;
  gmtime_r(&t, &g);
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &g);
  s.id = std::string(stamp) + (a.label.empty() ? "" : "-" + a.label);
  mkdir(a.results.c_str(), 0755);
  const std::string results = absolute(a.results);
  s.dir = results + "/campaign-" + s.id;
  s.bin_dir = absolute(a.bin_dir.empty() ? self_dir() : a.bin_dir);
  s.repo = a.repo.empty() ? find_repo() : absolute(a.repo);
  s.python = a.python;
  s.run_args = a.run_args;
  s.vm_args = a.vm_args;
  s.append = a.append;
  s.created = now.time;
  s.home_release = now.release;
  s.home_boot_id = now.boot_id;
  if (!a.vm) s.boots.push_back(kc::Boot{-1, now.release, now.boot_id, now.time, "the default kernel: the campaign began", -1, 0, ""});
  const std::string hook = a.vm ? "" : a.hook == "auto" ? (systemd_runs() ? "systemd" : "initd") : a.hook;

  // the plan
  std::ostringstream plan;
  plan << "campaign " << s.id << ": " << s.kernels.size() << " kernels, " << a.rounds << " rounds, "
       << s.steps.size() << " steps (" << (a.vm ? "each in a QEMU guest through scripts/vm-run" : "kexec, on this machine") << ")\n";
  for (std::size_t i = 0; i < s.kernels.size(); ++i) {
    const auto& k = s.kernels[i];
    plan << "  " << char('A' + i) << " = " << k.spec;
    if (!a.vm) plan << "\n      image " << k.image << (k.release.empty() ? "" : " (release " + k.release + ")")
                    << "\n      initrd " << (k.initrd.empty() ? "none" : k.initrd) << "\n      command line: " << k.cmdline;
    if (!k.label.empty()) plan << "\n      label " << k.label;
    plan << "\n";
  }
  plan << "  order:";
  const std::size_t boots = a.vm ? 0 : s.steps.size();  // every step on a boot of its own, the first included
  for (const auto& p : s.steps) plan << " " << char('A' + p.kernel);
  if (!a.vm) plan << "\n  kexec boots: " << boots << " (one per step, the first included; a boot that fails is tried once more), then a reboot into the default kernel (" << now.release << ")";
  if (a.rounds % 2) plan << "\n  note: an odd number of rounds; a linear drift cancels over pairs of rounds only";
  plan << "\n  each step: " << quoted(step_argv(s, s.kernels[0])) << "\n";
  if (!a.vm) plan << "  boot hook: " << (hook == "systemd" ? "systemd unit /etc/systemd/system/kbench-campaign.service"
                                                           : "init script /etc/init.d/S99kbench-campaign") << "\n";
  plan << "  state: " << s.dir << "/campaign.json\n";
  std::fputs(plan.str().c_str(), stdout);
  std::fflush(stdout);

  const std::string why = kc::start_refusal(probe, s, running_campaign(results));
  if (a.dry) {
    if (!why.empty()) say("it would be refused: " + why);
    return why.empty() ? 0 : kRefused;
  }
  if (!why.empty()) throw Refused{why};
  if (!fake_root().empty()) {
    say("fake machine (KBENCH_CAMPAIGN_FAKE_ROOT): the checks pass; nothing done");
    return 0;
  }
  if (a.vm && !is_file(s.repo + "/scripts/vm-run")) throw Refused{"no scripts/vm-run under " + s.repo + " (--repo)"};
  if (!a.vm && !is_file(s.bin_dir + "/kbench-run")) throw Refused{"no kbench-run in " + s.bin_dir + " (--bin-dir)"};
  if (mkdir(s.dir.c_str(), 0755) != 0) throw Failure{"cannot create " + s.dir + ": " + std::strerror(errno)};
  save(s);
  if (!a.vm) {
    install_hook(s, hook);
    save(s);
    say("boot hook installed: " + s.hook_files.back());
  }
  return drive(s, true);
}

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
  if (want_running) {
    const std::string r = running_campaign(results);
    if (r.empty()) throw Refused{"no campaign is running under " + results};
    return r;
  }
  auto all = campaigns(results);
  if (all.empty()) throw Refused{"no campaign under " + results};
  return all.back();
}

int stop(const std::vector<std::string>& args) {
  const std::string path = state_arg(args, true);
  kc::State s = load(path);
  const kc::Probe probe = machine_probe();
  if (s.mode == "host" && probe.euid() != 0) throw Refused{"needs root: it removes the boot hook and reboots"};
  if (s.pid > 0 && s.pid != getpid() && kill(pid_t(s.pid), 0) == 0) {
    auto comm = read_text("/proc/" + std::to_string(s.pid) + "/comm");
    if (comm && comm->rfind("kbench-campaign", 0) == 0) {
      say("stopping the running campaign process " + std::to_string(s.pid));
      kill(pid_t(s.pid), SIGTERM);
    }
  }
  const int lock = lock_dir(s.dir, true);
  (void)lock;
  s = load(path);
  kc::Now now = machine_now();
  kc::reconcile(s, now);
  for (auto& p : s.steps)
    if (p.status == "pending") p.reason = "not run: the campaign was stopped" + (p.reason.empty() ? "" : " (" + p.reason + ")");
  kc::mark_finished(s, "stopped", now);
  remove_hook(s);
  if (s.mode == "host" && fake_root().empty()) syscall(SYS_kexec_file_load, -1, -1, 0UL, nullptr, KEXEC_FILE_UNLOAD);
  save(s);
  std::fputs(describe(s).c_str(), stderr);
  say("stopped; the boot hook is removed");
  if (s.mode == "host" && kc::in_campaign_boot(s, now)) {
    say("back to the default kernel: rebooting");
    reboot_now(false);
  }
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
      kc::State s = load(args[0]);
      return drive(s, isatty(2));
    }
    if (cmd == "stop") return stop(args);
    if (cmd == "status") {
      std::fputs(describe(load(state_arg(args, false))).c_str(), stdout);
      return 0;
    }
    if (cmd == "report") {
      const std::string path = absolute(state_arg(args, false));
      kc::State s = load(path);
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
      std::fputs(describe(s).c_str(), stdout);
      make_report(s);
      return 0;
    }
    throw UsageError{"unknown command '" + cmd + "' (start, resume, stop, status, report)"};
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
