// scratch.cpp — per-invocation $TMPDIR (see scratch.hpp).
#include "driver/scratch.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>

#include "harness/internal/cleanup.hpp"  // remove_tree

namespace kbench::driver {

ScratchDir::ScratchDir() {
  const char* env = std::getenv("TMPDIR");
  had_tmpdir_ = env != nullptr;
  if (env) user_tmpdir_ = env;
  base_ = (env && *env) ? env : "/tmp";
}

ScratchDir::~ScratchDir() { sweep(); }

bool ScratchDir::prepare(std::string* error) {
  sweep();
  std::string templ = base_ + "/kbench-run-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    if (error) *error = "mkdtemp " + templ + ": " + std::strerror(errno);
    return false;
  }
  path_ = templ;
  setenv("TMPDIR", path_.c_str(), 1);
  return true;
}

int ScratchDir::sweep() {
  if (path_.empty()) return 0;
  int left = 0;
  if (DIR* d = opendir(path_.c_str())) {
    while (const dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++left;
    closedir(d);
  }
  if (kbench::remove_tree(path_.c_str()) != 0) left = -1;
  path_.clear();
  if (had_tmpdir_) {
    setenv("TMPDIR", user_tmpdir_.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  return left;
}

}  // namespace kbench::driver
