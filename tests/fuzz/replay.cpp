// replay.cpp — runs saved inputs through a fuzz target without libFuzzer.
//
// Linked with one fuzz_*.cpp by g++ (the Makefile's replay_<target>), so the
// corpus in tests/fuzz/corpus/<target>/ is a regression test that needs no
// clang: every file (or every file in every directory) given on the command
// line is passed to LLVMFuzzerTestOneInput once. A broken property aborts;
// under `make test-asan` a sanitizer report fails the pass.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Present only in sanitizer builds: lets a sanitizer report name the input.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace {

// The input being run, for the messages of a crash (static storage: the
// handlers below only write() it).
char g_current[4096] = "(empty input)";

void say_current() {
  static const char pre[] = "replay: the failing input is ";
  (void)!write(STDERR_FILENO, pre, sizeof pre - 1);
  (void)!write(STDERR_FILENO, g_current, strlen(g_current));
  (void)!write(STDERR_FILENO, "\n", 1);
}

void on_fatal_signal(int sig) {
  say_current();
  signal(sig, SIG_DFL);
  raise(sig);
}

bool read_file(const std::string& path, std::vector<std::uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

// Regular files of `path`: itself, or its entries (not recursive), sorted
// so that a failure names the same file every time.
bool inputs_of(const std::string& path, std::vector<std::string>& out) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  if (!S_ISDIR(st.st_mode)) {
    out.push_back(path);
    return true;
  }
  DIR* d = opendir(path.c_str());
  if (!d) return false;
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string full = path + "/" + name;
    if (stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode)) names.push_back(full);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  out.insert(out.end(), names.begin(), names.end());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
    return 2;
  }
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (!inputs_of(argv[i], files)) {
      std::perror(argv[i]);
      return 1;
    }
  }
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(say_current);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, on_fatal_signal);
  // An empty input is part of every run, as libFuzzer does.
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(""), 0);
  std::vector<std::uint8_t> data;
  for (const auto& f : files) {
    if (!read_file(f, data)) {
      std::perror(f.c_str());
      return 1;
    }
    std::snprintf(g_current, sizeof g_current, "%s", f.c_str());
    LLVMFuzzerTestOneInput(data.data(), data.size());
  }
  std::fprintf(stderr, "%s: %zu inputs replayed, no finding\n", argv[0], files.size());
  return files.empty() ? 1 : 0;
}
