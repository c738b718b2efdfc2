// cleanup.cpp — partner and temporary-directory registry, signal cleanup.
//
// The registry is fixed-size static storage so the signal handler can walk
// it without allocating. Registration blocks the cleanup signals briefly so
// the handler never sees a half-written slot.
#include "harness/internal/cleanup.hpp"
#include "harness/files.hpp"  // make_temp_dir, remove_temp_dir

#include <cerrno>
#include <climits>
#include <csignal>
#include <initializer_list>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/sys.hpp"

namespace kbench {

namespace {

constexpr int kMaxPartners = 512;
constexpr int kMaxTempDirs = 32;

pid_t g_partners[kMaxPartners];
pid_t g_helpers[kMaxPartners];
char g_temp_dirs[kMaxTempDirs][PATH_MAX];
volatile sig_atomic_t g_is_partner = 0;
// Only the process that installed the handlers cleans up: a child forked by
// the operation itself (lat_proc) inherits the handler until it execs or
// exits, and must not kill partners or remove directories.
volatile pid_t g_owner_pid = 0;
// Run first by run_cleanup (copies.cpp: stop the copies of --copies).
void (*volatile g_cleanup_hook)() = nullptr;

class SignalBlock {
 public:
  SignalBlock() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalBlock() { sigprocmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

// Set by the signal handler before it cleans up: another thread that fails
// because the cleanup removed its files (a --threads copy) must not exit 1
// in the handler's place (sys.cpp: die waits for the handler's _exit).
volatile sig_atomic_t g_terminating = 0;

void on_signal(int sig) {
  g_terminating = 1;
  if (!g_is_partner && getpid() == g_owner_pid) run_cleanup();
  _exit(128 + sig);
}

int remove_entries(int dirfd);

// Removes `name` in `dirfd`, a file or a whole directory.
int remove_at(int dirfd, const char* name) {
  if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return 0;
  if (errno != EISDIR && errno != EPERM) return -1;
  const int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0) return -1;
  int rc = remove_entries(sub);
  close(sub);
  if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) rc = -1;
  return rc;
}

struct LinuxDirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

int remove_entries(int dirfd) {
  alignas(8) char buf[4096];
  int rc = 0;
  // Deleting while reading can make getdents skip entries, so read again
  // from the start until a pass finds nothing left.
  for (int pass = 0; pass < 1000; ++pass) {
    if (lseek(dirfd, 0, SEEK_SET) < 0) return -1;
    bool found = false;
    for (;;) {
      const long n = syscall(SYS_getdents64, dirfd, buf, sizeof buf);
      if (n < 0) return -1;
      if (n == 0) break;
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
        off += d->d_reclen;
        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0) continue;
        found = true;
        if (remove_at(dirfd, d->d_name) != 0) rc = -1;
      }
    }
    if (!found || rc != 0) return rc;
  }
  return -1;
}

}  // namespace

bool in_partner() { return g_is_partner != 0; }
bool terminating() { return g_terminating != 0; }
void mark_partner_process() { g_is_partner = 1; }

int remove_tree(const char* path) {
  const int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : -1;
  int rc = remove_entries(fd);
  close(fd);
  if (rmdir(path) != 0 && errno != ENOENT) rc = -1;
  return rc;
}

void install_cleanup_handlers() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigfillset(&sa.sa_mask);  // one cleanup at a time
  g_owner_pid = getpid();
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) check(sigaction(sig, &sa, nullptr), "sigaction");
  signal(SIGPIPE, SIG_IGN);
}

namespace {

void add_pid(pid_t (&slots)[kMaxPartners], pid_t pid, const char* what) {
  SignalBlock block;
  for (pid_t& slot : slots) {
    if (slot == 0) {
      slot = pid;
      return;
    }
  }
  die(std::string("too many ") + what + " processes");
}

void remove_pid(pid_t (&slots)[kMaxPartners], pid_t pid) {
  SignalBlock block;
  for (pid_t& slot : slots)
    if (slot == pid) slot = 0;
}

}  // namespace

void register_partner(pid_t pid) { add_pid(g_partners, pid, "partner"); }
void unregister_partner(pid_t pid) { remove_pid(g_partners, pid); }
void register_helper(pid_t pid) { add_pid(g_helpers, pid, "helper"); }
void unregister_helper(pid_t pid) { remove_pid(g_helpers, pid); }

std::vector<pid_t> partner_pids() {
  std::vector<pid_t> out;
  for (pid_t pid : g_partners)
    if (pid > 0) out.push_back(pid);
  return out;
}

std::string make_temp_dir(const std::string& tag, const std::string& base_dir) {
  std::string base = base_dir;
  if (base.empty()) {
    const char* env = getenv("TMPDIR");
    base = (env == nullptr || *env == '\0') ? "/tmp" : env;
  }
  std::string templ = base + "/kbench-" + tag + "-XXXXXX";
  if (templ.size() >= PATH_MAX) die("temporary directory name too long: " + templ);
  SignalBlock block;
  int slot = -1;
  for (int i = 0; i < kMaxTempDirs; ++i) {
    if (g_temp_dirs[i][0] == '\0') {
      slot = i;
      break;
    }
  }
  if (slot < 0) die("too many temporary directories");
  if (mkdtemp(templ.data()) == nullptr) die_errno(("mkdtemp " + templ).c_str(), errno);
  memcpy(g_temp_dirs[slot], templ.c_str(), templ.size() + 1);
  return templ;
}

void remove_temp_dir(const std::string& path) {
  SignalBlock block;
  for (auto& slot : g_temp_dirs) {
    if (path == slot) {
      if (remove_tree(slot) != 0) die_errno(("remove " + path).c_str(), errno);
      slot[0] = '\0';
    }
  }
}

void set_cleanup_hook(void (*hook)()) { g_cleanup_hook = hook; }

void run_cleanup() {
  if (g_is_partner || (g_owner_pid != 0 && getpid() != g_owner_pid)) return;
  SignalBlock block;
  if (g_cleanup_hook) g_cleanup_hook();
  for (pid_t* list : {g_partners, g_helpers}) {
    for (int i = 0; i < kMaxPartners; ++i) {
      if (list[i] > 0) {
        kill(list[i], SIGKILL);
        while (waitpid(list[i], nullptr, 0) < 0 && errno == EINTR) {
        }
        list[i] = 0;
      }
    }
  }
  // Children of the operation itself (lat_proc's fork/exec/shell) that were
  // not waited for yet: they exit on their own within moments, so wait for
  // them (bounded) rather than leave zombies or orphans behind.
  for (int tries = 0; tries < 2000;) {
    const pid_t r = waitpid(-1, nullptr, WNOHANG);
    if (r > 0) continue;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;  // ECHILD: none left
    const timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
    ++tries;
  }
  for (auto& dir : g_temp_dirs) {
    if (dir[0] != '\0') {
      if (remove_tree(dir) != 0) {
        static const char msg[] = "kbench: could not remove a temporary directory\n";
        (void)!write(2, msg, sizeof msg - 1);
      }
      dir[0] = '\0';
    }
  }
}

}  // namespace kbench
