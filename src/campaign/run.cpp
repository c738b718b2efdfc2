// run.cpp — the processes kbench-campaign starts (run.hpp).
#include "campaign/run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "campaign/files.hpp"
#include "driver/campaign_hook.hpp"
#include "harness/sys.hpp"

namespace kbench::campaign {

namespace {

double mono_s() { return double(now_ns()) * 1e-9; }  // the harness's CLOCK_MONOTONIC

}  // namespace

Ran run_child(const std::vector<std::string>& argv, const RunOptions& o) {
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) != 0) throw Failure{std::string("pipe: ") + std::strerror(errno)};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Failure{std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGHUP, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!o.out_file.empty()) {
      const int fd = open(o.out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) dup2(fd, 1);
    } else {
      dup2(pfd[1], 1);
    }
    if (!o.err_file.empty()) {
      const int fd = open(o.err_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) dup2(fd, 2);
    }
    std::vector<char*> av;
    for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    execv(av[0], av.data());
    std::fprintf(stderr, "kbench-campaign: cannot run %s: %s\n", av[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // (the child does it too: whichever runs first)
  close(pfd[1]);
  Ran r;
  const double t0 = mono_s();
  double killed_at = -1, last_tick = -1;
  int passed = 0, st = 0;
  bool open_pipe = true, reaped = false;
  useconds_t nap = 5000;  // a short command ends in milliseconds: look often at first
  while (!reaped) {
    const double t = mono_s();
    if (o.tick && t - last_tick >= 1.0) {
      o.tick();
      last_tick = t;
    }
    if (g_signal && g_signal != passed) {  // a terminal's Ctrl-C, campaign-stop, the shutdown
      passed = g_signal;
      kill(-pid, g_signal == SIGHUP ? SIGTERM : int(g_signal));
    }
    if (o.deadline_s > 0 && !r.timed_out && t - t0 > o.deadline_s) {
      r.timed_out = true;
      killed_at = t;
      kill(-pid, SIGTERM);
    }
    if (killed_at >= 0 && t - killed_at > 10) {
      kill(-pid, SIGKILL);
      // stuck in the kernel (D state) past SIGKILL: left behind; the caller goes home
      if (t - killed_at > 20) break;
    }
    if (open_pipe) {
      pollfd p{pfd[0], POLLIN, 0};
      if (poll(&p, 1, 200) > 0) {
        char buf[4096];
        const ssize_t n = read(pfd[0], buf, sizeof buf);
        if (n > 0) r.out.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || (n < 0 && errno != EINTR)) open_pipe = false;
      }
    } else {
      usleep(nap);
      nap = std::min<useconds_t>(nap * 2, 200000);
    }
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) reaped = true;
    else if (w < 0 && errno != EINTR) break;
  }
  if (open_pipe) {  // what it wrote just before it ended
    char buf[4096];
    ssize_t n;
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    while ((n = read(pfd[0], buf, sizeof buf)) > 0) r.out.append(buf, static_cast<std::size_t>(n));
  }
  close(pfd[0]);
  r.status = !reaped ? 128 + SIGKILL : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (!trim(line).empty()) r.last_line = trim(line);
  return r;
}

std::string which(const std::string& name) {
  if (!fake_root().empty()) {  // the tests' fake machine: its own commands only
    const std::string p = fake_root() + "/bin/" + name;
    return access(p.c_str(), X_OK) == 0 ? p : "";
  }
  for (const char* d : {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    const std::string p = std::string(d) + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// Each kernel's runs under their own root, DIR/A, DIR/B, ...: two kernels of
// one release (a patched build) never share a kernel directory.
std::string kernel_out(const State& s, int kernel) { return s.dir + "/" + char('A' + kernel); }

std::vector<std::string> step_argv(const State& s, int kernel) {
  const Kernel& k = s.kernels.at(std::size_t(kernel));
  std::vector<std::string> a;
  if (s.mode == "vm") {
    a = {s.python, s.repo + "/scripts/vm-run", "--out", kernel_out(s, kernel)};
    if (!k.label.empty()) a.insert(a.end(), {"--label", k.label});
    a.insert(a.end(), s.vm_args.begin(), s.vm_args.end());
    a.push_back(k.image);
    a.push_back("--");
  } else {
    a = {s.bin_dir + "/kbench-run", "--out", kernel_out(s, kernel)};
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
    out += (out.empty() ? "" : " ") + (plain ? a : shell_quote(a));
  }
  return out;
}

void make_report(const State& s) {
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
    else if (d.empty()) say("kernel " + kernel_name(s, int(i)) + ": no run to compare");
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
  RunOptions to_file;
  to_file.out_file = s.dir + "/comparison.txt";
  r = run_child(cmp, to_file);
  if (r.status != 0) say("scripts/compare failed (exit " + std::to_string(r.status) + ")");
  else say("the comparison against " + s.kernels[0].spec + ": " + s.dir + "/comparison.txt");
}

std::string describe(const State& s, long now_epoch) {
  std::ostringstream o;
  o << "campaign " << s.id << " (" << s.mode << "): " << s.status << "; steps " << step_counts(s) << "\n";
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
      << b.note << (b.step >= 0 ? ", step " + std::to_string(b.step + 1) + " boot " + std::to_string(b.attempt) : "")
      << ")\n";
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
  if (s.status == "running") o << "  " << eta_text(s, now_epoch) << "\n";
  return o.str();
}

}  // namespace kbench::campaign
