// compress.cpp — gzip-compressing a finished run's JSON Lines (see compress.hpp).
#include "driver/compress.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/signals.hpp"

namespace kbench::driver {

namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A rename or an unlink is durable once its directory is synced.
void sync_dir(const std::string& path) {
  const int fd = open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

// gzip's path: the first executable `gzip` in $PATH (else /usr/bin:/bin),
// run with execv like every program the driver starts; "" when none.
std::string find_gzip() {
  const char* env = getenv("PATH");
  const std::string path = env && *env ? env : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = end > start ? path.substr(start, end - start) : ".";
    const std::string exe = dir + "/gzip";
    if (access(exe.c_str(), X_OK) == 0) return exe;
    start = end + 1;
  }
  return "";
}

// gzip ARGS < IN > OUT (OUT created, synced), in its own process group so
// that the terminal's Ctrl-C does not end it; "" when it worked, else why.
std::string run_gzip(const std::vector<const char*>& args, const std::string& in, const std::string& out) {
  const std::string gzip = find_gzip();
  if (gzip.empty()) return "no gzip found (apt-get install gzip)";
  const int ifd = open(in.c_str(), O_RDONLY | O_CLOEXEC);
  if (ifd < 0) return errno_text("open " + in);
  const int ofd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (ofd < 0) {
    const std::string why = errno_text("open " + out);
    close(ifd);
    return why;
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(gzip.c_str()));
  for (const char* a : args) argv.push_back(const_cast<char*>(a));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    reset_signals_in_child();
    (void)setpgid(0, 0);
    if (dup2(ifd, 0) < 0 || dup2(ofd, 1) < 0) _exit(126);
    execv(gzip.c_str(), argv.data());
    _exit(127);
  }
  const int fork_errno = errno;
  close(ifd);
  std::string why;
  if (pid < 0) {
    errno = fork_errno;
    why = errno_text("fork");
  } else {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) {
        why = errno_text("waitpid");
        break;
      }
    }
    if (!why.empty()) {
    } else if (WIFSIGNALED(status)) {
      why = "gzip killed by signal " + std::to_string(WTERMSIG(status));
    } else if (WEXITSTATUS(status) == 127) {
      why = "could not execute " + gzip;
    } else if (WEXITSTATUS(status) != 0) {
      why = "gzip exited with status " + std::to_string(WEXITSTATUS(status));
    } else if (fsync(ofd) != 0) {
      why = errno_text("fsync " + out);
    }
  }
  if (close(ofd) != 0 && why.empty()) why = errno_text("close " + out);
  return why;
}

// FROM -> TO by gzip ARGS through a temporary beside TO, renamed into place
// once complete and synced; then FROM is removed. "" or why not (then FROM
// is untouched and no temporary is left).
std::string convert(const std::vector<const char*>& args, const std::string& from, const std::string& to) {
  const std::string tmp = to + ".tmp." + std::to_string(getpid());
  std::string why = run_gzip(args, from, tmp);
  if (why.empty() && rename(tmp.c_str(), to.c_str()) != 0) why = errno_text("rename " + tmp);
  if (!why.empty()) {
    (void)unlink(tmp.c_str());
    return why;
  }
  sync_dir(to);
  if (unlink(from.c_str()) != 0) return errno_text("unlink " + from);  // both complete: readers take FROM
  sync_dir(from);
  return "";
}

// Temporaries of FILE and FILE.gz left by a driver killed while writing them.
void remove_stale_temporaries(const std::string& path) {
  const std::string dir = dir_of(path);
  const std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    for (const std::string& prefix : {base + ".tmp.", base + ".gz.tmp."})
      if (name.rfind(prefix, 0) == 0) stale.push_back(dir + "/" + name);
  }
  closedir(d);
  for (const auto& p : stale) (void)unlink(p.c_str());
}

}  // namespace

bool compress_file(const std::string& path, std::string* why) {
  const std::string w = convert({"-c"}, path, path + ".gz");
  if (why) *why = w;
  return w.empty();
}

void restore_file(const std::string& path) {
  remove_stale_temporaries(path);
  const std::string gz = path + ".gz";
  if (access(gz.c_str(), F_OK) != 0) return;
  if (access(path.c_str(), F_OK) == 0) {
    if (unlink(gz.c_str()) != 0) throw std::runtime_error(errno_text("unlink " + gz));
    sync_dir(gz);
    return;
  }
  const std::string why = convert({"-d", "-c"}, gz, path);
  if (!why.empty()) throw std::runtime_error("cannot decompress " + gz + " to resume the run: " + why);
}

}  // namespace kbench::driver
