// progress.cpp — progress lines and the time-left estimate (see progress.hpp).
//
// The estimate sums, over the invocations still to run, the last measured
// duration of the same case (cases differ by 100x: exec vs a null syscall),
// falling back to the mean so far for cases not yet run once.
#include "driver/progress.hpp"

#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace kbench::driver {

namespace {

double mono() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

std::string format_duration(double s) {
  if (s < 0) s = 0;
  const long t = static_cast<long>(s + 0.5);
  char buf[32];
  if (t < 60)
    std::snprintf(buf, sizeof buf, "%lds", t);
  else if (t < 3600)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  return buf;
}

Progress::Progress(int total, int reps, int cases)
    : tty_(isatty(STDERR_FILENO) == 1), total_(total), reps_(reps), cases_(cases), start_(mono()) {}

double Progress::elapsed() const { return mono() - start_; }

double Progress::estimate_left() const {
  if (done_ == 0) return -1;
  const double mean = spent_ / done_;
  double left = 0;
  int unknown = 0;
  for (const auto& [name, n] : remaining_) {
    auto it = last_duration_.find(name);
    if (it != last_duration_.end()) left += it->second * n;
    else unknown += n;
  }
  // Cases never seen yet this session: not in remaining_ either.
  unknown += total_ - done_;
  for (const auto& [name, n] : remaining_) unknown -= n;
  // Control cases run in slots that do not follow the reps one for one, so
  // remaining_ can overcount them near the end: never a negative estimate.
  return std::max(0.0, left + mean * std::max(0, unknown));
}

void Progress::print_line(const std::string& text) {
  if (tty_) {
    // A line longer than the terminal wraps, and \r then rewrites only its
    // last part: cut it to the width.
    std::string line = text;
    winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && line.size() >= ws.ws_col)
      line.resize(ws.ws_col - 1u);
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    line_open_ = true;
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

void Progress::clear() {
  if (tty_ && line_open_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    line_open_ = false;
  }
}

void Progress::starting(const std::string& case_name, int rep, int index_in_rep) {
  if (!tty_) return;
  const double left = estimate_left();
  char buf[512];
  std::snprintf(buf, sizeof buf, "rep %d/%d  case %d/%d  %-.40s  %s spent, %s left", rep + 1,
                reps_, index_in_rep + 1, cases_, case_name.c_str(), format_duration(elapsed()).c_str(),
                left < 0 ? "?" : ("~" + format_duration(left)).c_str());
  print_line(buf);
}

void Progress::finished(const std::string& case_name, int rep, const std::string& status,
                        const std::string& reason, double duration_s) {
  ++done_;
  spent_ += duration_s;
  last_duration_[case_name] = duration_s;
  // Remaining invocations of this case in this session: the reps after this one.
  remaining_[case_name] = reps_ - rep - 1;
  if (status != "ok" && status != "skipped" && status != "interrupted") {
    clear();
    std::fprintf(stderr, "kbench-run: %s: %s (rep %d): %s\n", status.c_str(), case_name.c_str(),
                 rep + 1, reason.c_str());
    std::fflush(stderr);
  }
}

void Progress::rep_done(int rep) {
  if (tty_) return;
  const double left = estimate_left();
  char buf[256];
  std::snprintf(buf, sizeof buf, "kbench-run: rep %d/%d done, %d/%d invocations, %s spent, %s left",
                rep + 1, reps_, done_, total_, format_duration(elapsed()).c_str(),
                left < 0 ? "?" : ("~" + format_duration(left)).c_str());
  print_line(buf);
}

}  // namespace kbench::driver
