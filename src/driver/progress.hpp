// progress.hpp — progress on stderr while the suite runs.
//
// On a terminal: one line rewritten in place (case i of N, rep r of R, time
// spent, estimated time left). Anywhere else (make's log, CI, a serial
// console): one line per finished rep, so a log stays short and readable.
// Failures always get their own line.
#pragma once

#include <map>
#include <string>

namespace kbench::driver {

class Progress {
 public:
  // `total` invocations to run in this session, `reps` per case.
  Progress(int total, int reps, int cases);
  void starting(const std::string& case_name, int rep, int index_in_rep);
  void finished(const std::string& case_name, int rep, const std::string& status,
                const std::string& reason, double duration_s);
  void rep_done(int rep);
  void clear();  // before other messages on a terminal

 private:
  double elapsed() const;
  double estimate_left() const;
  void print_line(const std::string& text);

  bool tty_;
  int total_, reps_, cases_;
  int done_ = 0;
  double start_;
  double spent_ = 0;
  std::map<std::string, double> last_duration_;  // per case, from the last rep
  std::map<std::string, int> remaining_;          // invocations left per case
  bool line_open_ = false;
};

// "1m05s", "42s", "2h03m".
std::string format_duration(double s);

}  // namespace kbench::driver
