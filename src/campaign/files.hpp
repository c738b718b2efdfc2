// files.hpp — what every part of kbench-campaign shares: its messages, time
// stamps, paths, the state file and the lock on a campaign's directory.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "driver/campaign.hpp"

namespace kbench::campaign {

struct Refused { std::string message; };  // exit 3: a check refused
struct Failure { std::string message; };  // exit 1: something that should work did not

// The signal that asked this process to end (SIGINT, SIGTERM, SIGHUP), 0 for none.
extern volatile sig_atomic_t g_signal;

// "kbench-campaign: MESSAGE" on stderr (the journal or the console when the
// hook runs), and a time-stamped line in the campaign's log once log_to()
// named it: what happened at each boot stays with the campaign's results.
void say(const std::string& m);
void log_to(const std::string& path);  // "": no log (closed: a file open for writing keeps its file system from going read-only)

std::string now_iso();

std::optional<std::string> read_text(const std::string& path);
std::string trim(std::string s);
bool is_file(const std::string& p);
bool is_dir(const std::string& p);
std::string absolute(const std::string& p);
std::string self_dir();
std::string self_exe();
std::string find_repo();

// KBENCH_CAMPAIGN_FAKE_ROOT=DIR (the tests' alone): "" on a real machine.
std::string fake_root();

void fsync_dir(const std::string& dir);
// Written durably: a temporary file beside it, fsync, rename, fsync of the
// directory. Throws Failure.
void write_file(const std::string& path, const std::string& text, mode_t mode);

void save(const State& s);
State load(const std::string& path);
// The state files of the campaigns under RESULTS, oldest first.
std::vector<std::string> campaigns(const std::string& results);
std::string running_campaign(const std::string& results);
// One process drives a campaign at a time: a lock on its directory (-1: held by another).
int lock_dir(const std::string& dir, bool wait);

}  // namespace kbench::campaign
