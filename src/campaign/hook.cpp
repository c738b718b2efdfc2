// hook.cpp — the boot hook on the machine (hook.hpp). On the tests' fake
// machine (KBENCH_CAMPAIGN_FAKE_ROOT) its files go under the fake root.
#include "campaign/hook.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "campaign/files.hpp"
#include "campaign/machine.hpp"
#include "campaign/run.hpp"
#include "driver/campaign_hook.hpp"

namespace kbench::campaign {

namespace {

// Whether an ELF file asks for a dynamic loader (a PT_INTERP header): such a
// program needs its libraries at every boot of every kernel.
bool elf_is_dynamic(const std::string& path) {
  const std::string head = read_text(path).value_or("").substr(0, 65536);
  if (head.size() < 64 || head.compare(0, 4, "\x7f" "ELF") != 0 || head[4] != 2) return false;
  auto u = [&head](std::size_t off, int n) {
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(head[off + std::size_t(i)]);
    return v;
  };
  const std::uint64_t phoff = u(32, 8), phentsize = u(54, 2), phnum = u(56, 2);
  for (std::uint64_t i = 0; i < phnum; ++i) {
    const std::uint64_t at = phoff + i * phentsize;
    if (at + 4 > head.size()) break;
    if (u(at, 4) == 3) return true;  // PT_INTERP
  }
  return false;
}

void mkdirs(const std::string& dir) {
  for (std::size_t i = 1; i <= dir.size(); ++i)
    if (i == dir.size() || dir[i] == '/') mkdir(dir.substr(0, i).c_str(), 0755);
}

std::string parent(const std::string& p) { return p.substr(0, p.rfind('/')); }

void systemctl(const std::vector<std::string>& args) {
  if (!systemd_runs()) return;
  std::vector<std::string> argv = {which("systemctl")};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions o;
  o.deadline_s = 120;
  const Ran r = run_child(argv, o);
  if (r.status != 0) say("warning: " + quoted(argv) + " failed (exit " + std::to_string(r.status) + ")");
}

}  // namespace

std::string hook_kind_here() { return systemd_runs() ? "systemd" : "initd"; }

void plan_hook(State& s, const std::string& kind) {
  s.hook_kind = kind;
  s.hook_files = hook_files(kind, is_dir(fake_root() + "/etc/rc2.d"));
}

void install_hook(const State& s) {
  const std::string root = fake_root();
  const std::string state = s.dir + "/campaign.json";
  const std::string exe = self_exe();
  if (elf_is_dynamic(exe))
    say("warning: " + exe + " is linked dynamically: the hook needs its libraries in every kernel's boot "
        "(make STATIC=1 builds a static one)");
  auto text = read_text(exe);
  if (!text) throw Failure{"cannot read " + exe + ": " + std::strerror(errno)};
  mkdirs(root + parent(kHookExe));
  write_file(root + kHookExe, *text, 0755);
  if (s.hook_kind == "systemd") {
    mkdirs(root + parent(kHookUnit));
    write_file(root + kHookUnit, hook_unit(s.id, kHookExe, state, {s.dir, s.bin_dir}), 0644);
    write_file(root + kHomeUnit, home_unit(s.id, kHookExe, state), 0644);
    mkdirs(root + parent(kHookUnitLink));
    unlink((root + kHookUnitLink).c_str());
    if (symlink(kHookUnit, (root + kHookUnitLink).c_str()) != 0)
      throw Failure{std::string("cannot link ") + kHookUnitLink + ": " + std::strerror(errno)};
    fsync_dir(root + parent(kHookUnitLink));
    systemctl({"daemon-reload"});
  } else {
    mkdirs(root + parent(kInitScript));
    write_file(root + kInitScript, init_script(s.id, kHookExe, state), 0755);
    for (const auto& f : s.hook_files)
      if (f == kRcLink) {  // sysvinit's runlevel link
        unlink((root + kRcLink).c_str());
        if (symlink(kInitScript, (root + kRcLink).c_str()) != 0)
          throw Failure{std::string("cannot link ") + kRcLink + ": " + std::strerror(errno)};
        fsync_dir(root + parent(kRcLink));
      }
  }
  sync();
}

void remove_hook(State& s) {
  const std::string root = fake_root();
  for (const auto& f : s.hook_files)
    if (unlink((root + f).c_str()) != 0 && errno != ENOENT)
      say("warning: cannot remove " + f + ": " + std::strerror(errno));
  if (s.hook_kind == "systemd" && !s.hook_files.empty()) systemctl({"daemon-reload"});
  s.hook_files.clear();
  sync();
}

void hand_over(const State& s) {
  const std::string state = s.dir + "/campaign.json";
  if (s.hook_kind == "systemd" && systemd_runs()) {
    systemctl({"start", "--no-block", "kbench-campaign.service"});
    return;
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Failure{std::string("fork: ") + std::strerror(errno)};
  if (pid > 0) return;
  setsid();
  signal(SIGHUP, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const int in = open("/dev/null", O_RDONLY);
  int out = fake_root().empty() ? open("/dev/console", O_WRONLY | O_NOCTTY) : -1;
  if (out < 0) out = open("/dev/null", O_WRONLY);
  if (in >= 0) dup2(in, 0);
  if (out >= 0) {
    dup2(out, 1);
    dup2(out, 2);
  }
  const std::string exe = fake_root().empty() ? std::string(kHookExe) : fake_root() + kHookExe;
  execl(exe.c_str(), exe.c_str(), "resume", state.c_str(), static_cast<char*>(nullptr));
  _exit(127);
}

}  // namespace kbench::campaign
