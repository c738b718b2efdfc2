// results.hpp — turning one finished invocation into records, and reading
// the records back for --resume and the end summary.
//
// Sample lines are appended once the invocation has ended, whatever its
// status, except when it was interrupted: then its samples are dropped and
// the (case, rep) pair is run again by --resume, so samples.jsonl never holds
// two copies of one invocation. Only complete lines that parse as JSON
// objects are kept; a partial last line (a binary killed mid-write) is
// dropped and counted in runs.jsonl.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "driver/discover.hpp"
#include "driver/plan.hpp"
#include "driver/spawn.hpp"

namespace kbench::driver {

struct Outcome {
  std::string status;  // ok, skipped, failed, timeout, crashed, interrupted
  std::string reason;  // why, for anything but ok ("" for ok)
  std::string samples; // lines to append to samples.jsonl
  int n_samples = 0;
  std::size_t dropped_partial_bytes = 0;
  int dropped_lines = 0;  // complete lines that were not JSON objects
  int temp_left = 0;      // entries left in its private $TMPDIR (-1: could not remove)
};

Outcome judge(const SpawnResult& r, double timeout_s);

// One runs.jsonl line (with its newline). `argv_tail` is everything after
// the binary name that the invocation was given.
// `round`: 0 for the first pass, k for the k-th budget round.
std::string runs_record(const std::string& run_id, const Case& c, int rep, int round,
                        const std::vector<std::string>& argv_tail, const SpawnResult& r,
                        const Outcome& o);

using CaseRep = std::pair<std::string, int>;

// Statuses of every (case, rep) that finished (not interrupted) according
// to runs.jsonl. A half-written last line (driver killed) is cut off.
std::map<CaseRep, std::string> finished_invocations(const std::string& runs_path);

// Drops sample lines of invocations that did not finish (possible only if
// the driver itself was killed between writing samples and their record) and
// a half-written last line. Returns how many lines were dropped.
int repair_samples(const std::string& samples_path, const std::map<CaseRep, std::string>& done);

// Per case over all its invocations in runs.jsonl: "failed" if any failed,
// timed out or crashed; else "ok" if any ok; else "skipped"; cases with only
// interrupted invocations are left out.
std::map<std::string, std::string> case_statuses(const std::string& runs_path,
                                                 std::map<std::string, std::string>* reasons);

// "lat_pipe: skipped: CPU 1 is not ..." -> "CPU 1 is not ..." for a case of
// bench lat_pipe; any other text unchanged.
std::string bare_reason(const std::string& reason, const std::string& bench);

// The end-of-run lines for every case that was not simply ok, in the
// order failed (also timeout, crashed), skipped, ran without a feature:
//   "failed: CASE: REASON (1 of 2 invocations; 1 ok)"
//   "skipped: CASE: REASON (2 of 2 invocations)"
//   "ran without thp: CASE (every sample says \"thp\": \"unavailable\")"
// The reason is that of runs.jsonl without the binary's "NAME: skipped: "
// prefix; a case with several reasons names the first and counts the others.
// A sample key whose value is "unavailable" names an optional kernel
// feature the case ran without (see simulated_missing in harness/sys.hpp).
std::vector<std::string> outcome_lines(const std::string& runs_path, const std::string& samples_path);

// What the budget rounds need to know of a run so far, read back from its
// files (so a resumed run decides as an uninterrupted one would): per case
// (indexes into `cases`) the median ns/op of each ok rep, the time spent,
// the next free rep index; the last round and control slot used.
struct SoFar {
  std::vector<CaseSoFar> cases;
  std::vector<int> next_rep;
  int max_round = 0;
  int next_control_slot = 0;
};
SoFar read_so_far(const std::string& runs_path, const std::string& samples_path, const std::vector<Case>& cases);

}  // namespace kbench::driver
