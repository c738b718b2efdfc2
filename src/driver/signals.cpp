// signals.cpp — self-pipe signal handling for the driver (see signals.hpp).
#include "driver/signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace kbench::driver {

namespace {

volatile sig_atomic_t g_first_signal = 0;
volatile sig_atomic_t g_signal_count = 0;
int g_pipe[2] = {-1, -1};

void on_signal(int sig) {
  const int saved = errno;
  if (sig != SIGCHLD) {
    if (g_first_signal == 0) g_first_signal = sig;
    g_signal_count = g_signal_count + 1;
  }
  const char byte = static_cast<char>(sig);
  // A full pipe already guarantees a wake-up, so EAGAIN is fine to ignore.
  if (g_pipe[1] >= 0) (void)!write(g_pipe[1], &byte, 1);
  errno = saved;
}

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "kbench-run: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

}  // namespace

void install_signal_handlers() {
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) die("pipe2");
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  if (sigemptyset(&sa.sa_mask) != 0) die("sigemptyset");
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    if (sigaction(sig, &sa, nullptr) != 0) die("sigaction");
  }
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  if (sigaction(SIGCHLD, &sa, nullptr) != 0) die("sigaction(SIGCHLD)");
  // A closed stdout (kbench-run | head) must give EPIPE, not kill the run.
  struct sigaction ign;
  std::memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  if (sigemptyset(&ign.sa_mask) != 0) die("sigemptyset");
  if (sigaction(SIGPIPE, &ign, nullptr) != 0) die("sigaction(SIGPIPE)");
}

int interrupt_signal() { return g_first_signal; }
int interrupt_count() { return g_signal_count; }
int signal_wakeup_fd() { return g_pipe[0]; }

void drain_signal_wakeup() {
  char buf[64];
  while (read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

void reset_signals_in_child() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) sigaction(sig, &sa, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace kbench::driver
