// files.cpp — what every part of kbench-campaign shares (files.hpp): its
// messages (on stderr and in the campaign's log), time stamps, paths, and
// the state file written so that a power loss leaves the old state or the
// new one.
#include "campaign/files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "driver/json_value.hpp"

namespace kbench::campaign {

using driver::json_dump;
using driver::json_parse;

volatile sig_atomic_t g_signal = 0;

namespace {
int g_log_fd = -1;  // the campaign's log (DIR/campaign.log), once known
}  // namespace

void say(const std::string& m) {
  std::fprintf(stderr, "kbench-campaign: %s\n", m.c_str());
  std::fflush(stderr);
  if (g_log_fd >= 0) {
    const std::string line = now_iso() + " " + m + "\n";
    if (write(g_log_fd, line.data(), line.size()) < 0) {
      // a full disk: the message is on stderr (the journal, the console) still
    }
  }
}

void log_to(const std::string& path) {
  if (g_log_fd >= 0) close(g_log_fd);
  g_log_fd = path.empty() ? -1 : open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

std::string now_iso() {
  time_t t = time(nullptr);
  tm g;
  gmtime_r(&t, &g);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &g);
  return buf;
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

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "kbench-campaign";
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

// KBENCH_CAMPAIGN_FAKE_ROOT=DIR (the tests' alone): /proc and /sys are read
// under DIR, the euid is DIR/euid, kexec's probe answers DIR/kexec_probe
// (0, ENOSYS, EPERM); nothing is ever loaded, booted or installed.
std::string fake_root() {
  const char* f = std::getenv("KBENCH_CAMPAIGN_FAKE_ROOT");
  return f ? f : "";
}

void fsync_dir(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

State load(const std::string& path) {
  auto text = read_text(path);
  if (!text) throw Failure{path + ": cannot read: " + std::strerror(errno)};
  std::string err;
  auto j = json_parse(*text, &err);
  if (!j) throw Failure{path + ": not JSON (" + err + ")"};
  try {
    return state_from_json(*j);
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

void write_file(const std::string& path, const std::string& text, mode_t mode) {
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw Failure{"cannot write " + tmp + ": " + std::strerror(errno)};
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t w = write(fd, text.data() + off, text.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = w < 0 ? errno : ENOSPC;
      close(fd);
      unlink(tmp.c_str());
      throw Failure{"cannot write " + tmp + ": " + std::strerror(e)};
    }
    off += static_cast<std::size_t>(w);
  }
  if (fchmod(fd, mode) != 0 || fsync(fd) != 0) {
    const int e = errno;
    close(fd);
    unlink(tmp.c_str());
    throw Failure{"cannot write " + tmp + ": " + std::strerror(e)};
  }
  if (close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    throw Failure{"cannot write " + path + ": " + std::strerror(e)};
  }
  const auto slash = path.rfind('/');
  fsync_dir(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
}

// Through write_file: after a crash the state file is the old state or the
// new one, never half of either.
void save(const State& s) { write_file(s.dir + "/campaign.json", json_dump(state_to_json(s), true) + "\n", 0644); }

}  // namespace kbench::campaign
