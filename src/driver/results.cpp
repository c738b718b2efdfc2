// results.cpp — judging invocations and keeping runs.jsonl/samples.jsonl
// consistent (see results.hpp).
#include "driver/results.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "driver/json_value.hpp"
#include "driver/meta.hpp"
#include "driver/rundir.hpp"
#include "harness/internal/median.hpp"

namespace kbench::driver {

namespace {

std::string signal_text(int sig) {
  const char* name = strsignal(sig);
  return "signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// Splits `text` into complete lines; returns the length of the complete part.
std::size_t complete_part(const std::string& text) {
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? 0 : nl + 1;
}

template <typename F>
void for_each_line(const std::string& text, std::size_t len, F f) {
  std::size_t pos = 0;
  while (pos < len) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos || nl > len) nl = len;
    f(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

bool blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

// Cuts a half-written last line off a JSON Lines file.
void truncate_partial(const std::string& path, const std::string& text) {
  const std::size_t keep = complete_part(text);
  if (keep == text.size()) return;
  if (truncate(path.c_str(), static_cast<off_t>(keep)) != 0)
    throw std::runtime_error("truncate " + path + ": " + std::strerror(errno));
}

}  // namespace

Outcome judge(const SpawnResult& r, double timeout_s) {
  Outcome o;
  const std::string last = last_line(r.err_tail);
  if (!r.started) {
    o.status = "failed";
    o.reason = "could not start: " + r.error;
    return o;
  }
  if (r.interrupted && !(r.exited && r.exit_code == 0)) {
    o.status = "interrupted";
    o.reason = "the driver was interrupted; the samples of this invocation were discarded";
    return o;  // nothing appended: --resume runs it again
  } else if (r.timed_out) {
    o.status = "timeout";
    o.reason = "still running after " + seconds_text(timeout_s) + " s; sent SIGTERM" +
               (r.killed ? ", then SIGKILL" : "");
  } else if (r.signaled) {
    o.status = "crashed";
    o.reason = "killed by " + signal_text(r.term_signal);
  } else if (r.exit_code == 0) {
    o.status = "ok";
  } else if (r.exit_code == 77) {
    o.status = "skipped";
    o.reason = last.empty() ? "skipped (no reason given)" : last;
  } else {
    o.status = "failed";
    o.reason = "exit " + std::to_string(r.exit_code) + (last.empty() ? "" : ": " + last);
  }

  const std::size_t len = complete_part(r.out);
  o.dropped_partial_bytes = r.out.size() - len;
  for_each_line(r.out, len, [&](const std::string& line) {
    if (blank(line)) return;
    auto v = json_parse(line);
    if (!v || !v->is_object()) {
      ++o.dropped_lines;
      return;
    }
    o.samples += line;
    o.samples += '\n';
    ++o.n_samples;
  });
  if (o.status == "ok" && o.n_samples == 0) {
    // The contract is samples on exit 0; silence means something is wrong.
    o.status = "failed";
    o.reason = "exit 0 but no sample lines on stdout";
  }
  return o;
}

std::string runs_record(const std::string& run_id, const Case& c, int rep, int round,
                        const std::vector<std::string>& argv_tail, const SpawnResult& r,
                        const Outcome& o) {
  JsonValue j = JsonValue::object();
  j.set("schema", JsonValue::integer(1));
  j.set("run_id", JsonValue::string(run_id));
  j.set("case", JsonValue::string(c.name));
  j.set("bench", JsonValue::string(c.bench));
  j.set("variant", JsonValue::string(c.variant));
  j.set("params", JsonValue::string(c.params));
  j.set("placement", JsonValue::string(c.placement));
  j.set("metric", JsonValue::string(c.metric));
  j.set("rep_idx", JsonValue::integer(rep));
  JsonValue args = JsonValue::array();
  for (const auto& a : argv_tail) args.push(JsonValue::string(a));
  j.set("args", args);
  j.set("status", JsonValue::string(o.status));
  j.set("exit_code", r.exited ? JsonValue::integer(r.exit_code) : JsonValue());
  j.set("signal", r.signaled ? JsonValue::integer(r.term_signal) : JsonValue());
  j.set("duration_ms", JsonValue::real(std::round(r.duration_ms * 1000) / 1000));
  j.set("n_samples", JsonValue::integer(o.n_samples));
  j.set("stderr_tail", JsonValue::string(r.err_tail));
  j.set("reason", JsonValue::string(o.reason));
  // Beyond the reference's list; readers ignore what they do not know.
  j.set("binary", JsonValue::string(c.binary));
  j.set("dropped_partial_bytes", JsonValue::integer(static_cast<long long>(o.dropped_partial_bytes)));
  j.set("dropped_lines", JsonValue::integer(o.dropped_lines));
  j.set("temp_left_behind", JsonValue::integer(o.temp_left));
  j.set("stdout_truncated", JsonValue::boolean(r.out_truncated));
  j.set("ended_utc", JsonValue::string(utc_now_iso()));
  j.set("round", JsonValue::integer(round));
  j.set("control", JsonValue::boolean(c.control));
  return json_dump(j) + "\n";
}

std::map<CaseRep, std::string> finished_invocations(const std::string& runs_path) {
  std::map<CaseRep, std::string> done;
  std::string text;
  try {
    text = read_whole_file(runs_path);
  } catch (const std::runtime_error&) {
    if (access(runs_path.c_str(), F_OK) != 0) return done;  // interrupted before any record
    throw;
  }
  truncate_partial(runs_path, text);
  for_each_line(text, complete_part(text), [&](const std::string& line) {
    auto v = json_parse(line);
    if (!v || !v->is_object()) return;
    auto name = v->get_string("case");
    auto status = v->get_string("status");
    const JsonValue* rep = v->find("rep_idx");
    if (!name || !status || !rep || !rep->as_int() || *status == "interrupted") return;
    done[{*name, static_cast<int>(*rep->as_int())}] = *status;
  });
  return done;
}

int repair_samples(const std::string& samples_path, const std::map<CaseRep, std::string>& done) {
  if (access(samples_path.c_str(), F_OK) != 0) return 0;
  const std::string text = read_whole_file(samples_path);
  const std::size_t len = complete_part(text);
  std::string kept;
  int dropped = len == text.size() ? 0 : 1;
  for_each_line(text, len, [&](const std::string& line) {
    auto v = json_parse(line);
    if (v && v->is_object()) {
      auto name = v->get_string("case");
      const JsonValue* rep = v->find("rep_idx");
      if (name && rep && rep->as_int() &&
          done.find({*name, static_cast<int>(*rep->as_int())}) == done.end()) {
        ++dropped;
        return;
      }
    }
    kept += line;
    kept += '\n';
  });
  if (dropped > 0) write_file_atomic(samples_path, kept);
  return dropped;
}

std::map<std::string, std::string> case_statuses(const std::string& runs_path,
                                                 std::map<std::string, std::string>* reasons) {
  std::map<std::string, std::set<std::string>> seen;
  std::map<std::string, std::string> why;
  if (access(runs_path.c_str(), F_OK) == 0) {
    const std::string text = read_whole_file(runs_path);
    for_each_line(text, complete_part(text), [&](const std::string& line) {
      auto v = json_parse(line);
      if (!v || !v->is_object()) return;
      auto name = v->get_string("case");
      auto status = v->get_string("status");
      if (!name || !status || *status == "interrupted") return;
      seen[*name].insert(*status);
      if (*status != "ok") why[*name] = v->get_string("reason").value_or("");
    });
  }
  std::map<std::string, std::string> out;
  for (const auto& [name, statuses] : seen) {
    if (statuses.count("failed") || statuses.count("timeout") || statuses.count("crashed"))
      out[name] = "failed";
    else if (statuses.count("ok"))
      out[name] = "ok";
    else
      out[name] = "skipped";
    if (reasons && out[name] != "ok") (*reasons)[name] = why[name];
  }
  return out;
}

std::string bare_reason(const std::string& reason, const std::string& bench) {
  for (const std::string& prefix : {bench + ": skipped: ", "exit 77: " + bench + ": skipped: "})
    if (!bench.empty() && reason.rfind(prefix, 0) == 0) return reason.substr(prefix.size());
  return reason;
}

namespace {

std::string count_text(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// f(object) for every complete JSON object line of the file, if it exists.
template <typename F>
void json_lines(const std::string& path, F f) {
  if (access(path.c_str(), F_OK) != 0) return;
  const std::string text = read_whole_file(path);
  for_each_line(text, complete_part(text), [&](const std::string& line) {
    auto v = json_parse(line);
    if (v && v->is_object()) f(*v);
  });
}

}  // namespace

std::vector<std::string> outcome_lines(const std::string& runs_path, const std::string& samples_path) {
  struct Seen {
    std::map<std::string, int> n;                                  // status -> invocations
    std::map<std::string, std::vector<std::string>> reasons;       // status -> distinct reasons, first first
    int total = 0;
  };
  std::map<std::string, Seen> cases;
  json_lines(runs_path, [&](const JsonValue& v) {
    auto name = v.get_string("case");
    auto status = v.get_string("status");
    if (!name || !status || *status == "interrupted") return;
    Seen& s = cases[*name];
    ++s.total;
    ++s.n[*status];
    if (*status == "ok") return;
    const std::string why = bare_reason(v.get_string("reason").value_or(""), v.get_string("bench").value_or(""));
    auto& list = s.reasons[*status];
    if (std::find(list.begin(), list.end(), why) == list.end()) list.push_back(why);
  });
  // Features each case ran without: keys whose value is "unavailable".
  std::map<std::string, std::map<std::string, int>> without;  // case -> key -> samples
  std::map<std::string, int> samples;
  json_lines(samples_path, [&](const JsonValue& v) {
    auto name = v.get_string("case");
    if (!name) return;
    ++samples[*name];
    for (const auto& [k, x] : v.members())
      if (x.is_string() && x.text() == "unavailable") ++without[*name][k];
  });

  std::vector<std::string> out;
  for (const char* status : {"failed", "timeout", "crashed", "skipped"}) {
    for (const auto& [name, s] : cases) {
      const auto it = s.n.find(status);
      if (it == s.n.end()) continue;
      const auto& why = s.reasons.at(status);
      std::string line = std::string(status) + ": " + name + ": " + (why[0].empty() ? "(no reason given)" : why[0]);
      if (why.size() > 1) line += " (and " + count_text(static_cast<int>(why.size()) - 1, "other reason", "other reasons") + ")";
      line += " (" + std::to_string(it->second) + " of " + count_text(s.total, "invocation", "invocations");
      if (const auto ok = s.n.find("ok"); ok != s.n.end()) line += "; " + std::to_string(ok->second) + " ok";
      out.push_back(line + ")");
    }
  }
  for (const auto& [name, keys] : without) {
    for (const auto& [key, n] : keys) {
      const int all = samples[name];
      out.push_back("ran without " + key + ": " + name + " (" +
                    (n == all ? std::string("every sample") : std::to_string(n) + " of " + std::to_string(all) + " samples") +
                    " says \"" + key + "\": \"unavailable\")");
    }
  }
  return out;
}

SoFar read_so_far(const std::string& runs_path, const std::string& samples_path, const std::vector<Case>& cases) {
  SoFar sf;
  sf.cases.resize(cases.size());
  sf.next_rep.assign(cases.size(), 0);
  std::map<std::string, std::size_t> index;
  // A summary table's case declares its column ("summary":{...}; others
  // "summary":null); the report's first table is the lowest category_rank
  // among them.
  std::vector<std::int64_t> rank(cases.size(), std::numeric_limits<std::int64_t>::max());
  std::int64_t first_rank = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    index[cases[i].name] = i;
    const auto decl = json_parse(cases[i].declaration);
    const JsonValue* summary = decl ? decl->find("summary") : nullptr;
    sf.cases[i].headline = summary && summary->is_object();
    if (!sf.cases[i].headline) continue;
    if (const JsonValue* r = decl->find("category_rank"); r && r->as_int()) rank[i] = *r->as_int();
    first_rank = std::min(first_rank, rank[i]);
  }
  for (std::size_t i = 0; i < cases.size(); ++i)
    sf.cases[i].first_table = sf.cases[i].headline && rank[i] == first_rank;
  json_lines(runs_path, [&](const JsonValue& v) {
    auto name = v.get_string("case");
    auto status = v.get_string("status");
    const JsonValue* rep = v.find("rep_idx");
    if (!name || !status || !rep || !rep->as_int() || *status == "interrupted") return;
    if (const JsonValue* r = v.find("round"); r && r->as_int()) sf.max_round = std::max(sf.max_round, static_cast<int>(*r->as_int()));
    auto it = index.find(*name);
    if (it == index.end()) return;
    const int rep_idx = static_cast<int>(*rep->as_int());
    if (cases[it->second].control) sf.next_control_slot = std::max(sf.next_control_slot, rep_idx + 1);
    CaseSoFar& c = sf.cases[it->second];
    sf.next_rep[it->second] = std::max(sf.next_rep[it->second], rep_idx + 1);
    ++c.invocations;
    if (const JsonValue* d = v.find("duration_ms"); d && d->as_double()) c.seconds += *d->as_double() / 1000.0;
    if (*status != "ok") c.usable = false;
  });
  std::map<std::pair<std::size_t, int>, std::vector<double>> per_rep;
  json_lines(samples_path, [&](const JsonValue& v) {
    auto name = v.get_string("case");
    const JsonValue* rep = v.find("rep_idx");
    const JsonValue* ns = v.find("ns_per_op");
    if (!name || !rep || !rep->as_int() || !ns || !ns->as_double()) return;
    auto it = index.find(*name);
    if (it == index.end()) return;
    per_rep[{it->second, static_cast<int>(*rep->as_int())}].push_back(*ns->as_double());
  });
  for (auto& [key, v] : per_rep) sf.cases[key.first].rep_values.push_back(median_of(std::move(v)));
  return sf;
}

}  // namespace kbench::driver
