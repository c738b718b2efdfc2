// rundir.cpp — run ids, run directories and safe file writing (see rundir.hpp).
#include "driver/rundir.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace kbench::driver {

namespace {

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

// uname fields become directory names: keep them to one safe component.
std::string path_component(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '/' || c == '\0') ? '_' : c;
  if (out.empty() || out == "." || out == "..") out = "unknown";
  return out;
}

void mkdir_shared(const std::string& path) {
  if (mkdir(path.c_str(), 0777) == 0) return;
  if (errno != EEXIST) throw sys_error("mkdir " + path);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw sys_error("stat " + path);
  if (!S_ISDIR(st.st_mode)) throw std::runtime_error(path + " exists and is not a directory");
}

// Every level of `path`, as mkdir -p would, but tolerating a twin's race.
void mkdirs(const std::string& path) {
  for (std::size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      const std::string prefix = path.substr(0, i);
      if (!prefix.empty() && prefix != "." && prefix != "..") mkdir_shared(prefix);
    }
  }
}

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw sys_error("write " + path);
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::uint64_t random_u64() {
  std::uint64_t v = 0;
  unsigned char* p = reinterpret_cast<unsigned char*>(&v);
  std::size_t got = 0;
  while (got < sizeof v) {
    const ssize_t n = getrandom(p + got, sizeof v - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // old kernel without getrandom: try the device
    }
    got += static_cast<std::size_t>(n);
  }
  if (got == sizeof v) return v;
  const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t n = read(fd, &v, sizeof v);
    close(fd);
    if (n == static_cast<ssize_t>(sizeof v)) return v;
  }
  // Last resort (an initramfs without /dev): still distinct per process.
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (std::uint64_t(ts.tv_nsec) << 20) ^ std::uint64_t(ts.tv_sec) ^ (std::uint64_t(getpid()) << 40);
}

std::string make_run_id() {
  const time_t t = time(nullptr);
  tm g;
  char stamp[32];
  if (!gmtime_r(&t, &g) || strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &g) == 0)
    throw std::runtime_error("cannot format the current time");
  char id[48];
  std::snprintf(id, sizeof id, "%s-%06llx", stamp,
                static_cast<unsigned long long>(random_u64() & 0xFFFFFF));
  return id;
}

RunDir create_run_dir(const std::string& out, const std::string& host,
                      const std::string& kernel_release, const std::string& label) {
  std::string parent = out;
  while (parent.size() > 1 && parent.back() == '/') parent.pop_back();
  parent += "/" + path_component(host) + "/" + path_component(kernel_release);
  if (!label.empty()) parent += "[" + path_component(label) + "]";
  mkdirs(parent);
  for (int attempt = 0; attempt < 100; ++attempt) {
    RunDir d;
    d.run_id = make_run_id();
    d.path = parent + "/" + d.run_id;
    if (mkdir(d.path.c_str(), 0777) == 0) return d;
    if (errno != EEXIST) throw sys_error("mkdir " + d.path);
  }
  throw std::runtime_error("cannot find a free run id under " + parent);
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw sys_error("open " + tmp);
  try {
    write_all(fd, text, tmp);
  } catch (...) {
    close(fd);
    unlink(tmp.c_str());
    throw;
  }
  if (close(fd) != 0) {
    unlink(tmp.c_str());
    throw sys_error("close " + tmp);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const auto e = sys_error("rename " + tmp + " to " + path);
    unlink(tmp.c_str());
    throw e;
  }
}

std::string read_whole_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw sys_error("open " + path);
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      const auto e = sys_error("read " + path);
      close(fd);
      throw e;
    }
  }
  close(fd);
  return text;
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) close(fd_);
}

void AppendFile::open(const std::string& path) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd_ < 0) throw sys_error("open " + path);
}

void AppendFile::append(const std::string& text) { write_all(fd_, text, path_); }

}  // namespace kbench::driver

#include <sys/file.h>

namespace kbench::driver {

void lock_run_dir(const std::string& path) {
  // Kept open (and locked) until the process exits: no close on purpose.
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw sys_error("open " + path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      throw std::runtime_error(path + " is in use by another kbench-run");
    throw sys_error("flock " + path);
  }
}

}  // namespace kbench::driver
