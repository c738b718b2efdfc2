// signals.hpp — the driver's own signal handling.
//
// SIGINT/SIGTERM/SIGHUP must not kill the driver outright: it has to pass a
// SIGTERM on to the running benchmark (which is in its own process group and
// so does not see the terminal's Ctrl-C), wait for it to clean up, and mark
// the run interrupted. The handlers only record the signal and write a byte
// to a self-pipe, so that the spawn loop's poll() wakes up at once; SIGCHLD
// uses the same pipe so a child's exit is noticed without polling.
#pragma once

namespace kbench::driver {

// Installs the handlers and creates the self-pipe. Call once, early.
void install_signal_handlers();

// The first interrupting signal received (SIGINT/SIGTERM/SIGHUP), or 0.
int interrupt_signal();
// How many interrupting signals arrived: a second one means "hurry up".
int interrupt_count();

// Read end of the self-pipe, for poll(); drain it after it polls readable.
int signal_wakeup_fd();
void drain_signal_wakeup();

// Undoes the handlers in a forked child before exec (async-signal-safe):
// default dispositions, including SIGPIPE, and an empty signal mask.
void reset_signals_in_child();

}  // namespace kbench::driver
