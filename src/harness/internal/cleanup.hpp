// cleanup.hpp — what must be undone when a benchmark ends, however it ends.
//
// Partners (child processes) and temporary directories are registered here.
// Normal exit, a failure (die/skip) and SIGINT/SIGTERM/SIGHUP all run the
// same cleanup: kill and reap every partner, remove every temporary
// directory. The signal path uses only async-signal-safe calls (no malloc,
// no stdio), so it works whatever the benchmark was doing when interrupted.
#pragma once

#include <string>
#include <vector>
#include <sys/types.h>

namespace kbench {

// Installs the SIGINT/SIGTERM/SIGHUP handlers (exit 128+signal after
// cleanup) and ignores SIGPIPE so a dead partner shows up as EPIPE.
void install_cleanup_handlers();

void register_partner(pid_t pid);
void unregister_partner(pid_t pid);
// Helper programs (bench.hpp, adopt_helper): killed and reaped as partners
// are, never in partner_pids().
void register_helper(pid_t pid);
void unregister_helper(pid_t pid);
// The partners alive now (for per-sample counters).
std::vector<pid_t> partner_pids();
// make_temp_dir and remove_temp_dir, for benchmarks, are in files.hpp;
// the directories they make are removed by run_cleanup.

// Kills and reaps partners, removes temporary directories. Idempotent.
void run_cleanup();
// An async-signal-safe function run_cleanup calls first (nullptr: none);
// --copies stops its copies with it.
void set_cleanup_hook(void (*hook)());

// True in a forked partner: it must not run the parent's cleanup.
bool in_partner();
// True once a SIGINT/SIGTERM/SIGHUP handler has started: the process is
// about to exit 128+signal, whatever its other threads run into meanwhile.
bool terminating();
void mark_partner_process();

// rm -rf with raw system calls only (usable in a signal handler).
// Returns 0, or -1 if something could not be removed.
int remove_tree(const char* path);

}  // namespace kbench
