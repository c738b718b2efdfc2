// sys.cpp — the failure paths shared by every binary: message, cleanup, exit.
#include "harness/sys.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "harness/internal/cleanup.hpp"

namespace kbench {

namespace {
const char* g_program_name = "kbench";
}

const char* program_name() { return g_program_name; }
void set_program_name(const char* name) { g_program_name = name; }

bool simulated_missing(const char* feature) {
  static const std::string list = [] {
    const char* env = std::getenv("KBENCH_MISSING");
    return env && *env ? "," + std::string(env) + "," : std::string();
  }();
  return !list.empty() && list.find("," + std::string(feature) + ",") != std::string::npos;
}

// A failure while a signal's cleanup runs in another thread (it removed the
// files this thread works on) is the signal's doing: wait for its exit status.
static void wait_for_signal_exit() {
  if (!terminating()) return;
  for (;;) pause();
}

void die_errno(const char* what, int err) {
  wait_for_signal_exit();
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s%s: %s\n", g_program_name, in_partner() ? "partner: " : "", what,
               std::strerror(err));
  run_cleanup();
  _exit(kExitFailure);
}

void die(const std::string& message) {
  wait_for_signal_exit();
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s%s\n", g_program_name, in_partner() ? "partner: " : "",
               message.c_str());
  run_cleanup();
  _exit(kExitFailure);
}

void bad_param(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", g_program_name, message.c_str());
  run_cleanup();
  _exit(kExitUsage);
}

void skip(const std::string& reason) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: skipped: %s\n", g_program_name, reason.c_str());
  run_cleanup();
  _exit(kExitSkip);
}

}  // namespace kbench
