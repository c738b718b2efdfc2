// campaign.cpp — the pure part of a campaign (campaign.hpp): plan, state,
// transitions, refusals. Nothing here touches the machine except through the
// Probe the caller passes.
#include "driver/campaign.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "driver/campaign_boot.hpp"
#include "harness/internal/usage_error.hpp"

namespace kbench::campaign {

using driver::JsonValue;

std::vector<int> balanced_order(int n, int rounds) {
  std::vector<int> out;
  if (n <= 0 || rounds <= 0) return out;
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < n; ++i) out.push_back(r % 2 == 0 ? i : n - 1 - i);
  return out;
}

Kernel parse_kernel_spec(const std::string& text) {
  Kernel k;
  std::vector<std::string> parts;
  std::string cur;
  for (char c : text) {
    if (c == ',') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  k.spec = parts[0];
  if (k.spec.empty()) throw UsageError{"kernel '" + text + "': empty image or release"};
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    const std::string key = parts[i].substr(0, eq);
    const std::string val = eq == std::string::npos ? "" : parts[i].substr(eq + 1);
    if (eq == std::string::npos || val.empty())
      throw UsageError{"kernel '" + text + "': expected KEY=VALUE after a comma, got '" + parts[i] + "'"};
    if (key == "initrd" && val == "none") {
      k.no_initrd = true;
    } else if (key == "initrd") {
      k.initrd = val;
    } else if (key == "label") {
      for (char c : val)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-'))
          throw UsageError{"kernel '" + text + "': label: only letters, digits and . _ + - are allowed"};
      k.label = val;
    } else {
      throw UsageError{"kernel '" + text + "': unknown option '" + key + "' (initrd=FILE, label=NAME)"};
    }
  }
  return k;
}

std::optional<std::string> image_version_from_bytes(const std::string& head) {
  if (head.size() < 0x210 || head.compare(0x202, 4, "HdrS") != 0) return std::nullopt;
  const auto lo = static_cast<unsigned char>(head[0x20E]), hi = static_cast<unsigned char>(head[0x20F]);
  const std::size_t off = 0x200 + (std::size_t(hi) << 8 | lo);
  if (off >= head.size()) return std::string();
  std::string text = head.substr(off, 512);
  text = text.substr(0, text.find('\0'));
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::optional<std::string> image_release_from_bytes(const std::string& head) {
  const auto v = image_version_from_bytes(head);
  if (!v) return std::nullopt;
  std::istringstream in(*v);
  std::string word;
  if (!(in >> word)) return std::string("unknown");
  return word;
}

bool version_matches(const std::string& image_version, const std::string& proc_version) {
  std::string pv = proc_version;
  while (!pv.empty() && std::isspace(static_cast<unsigned char>(pv.back()))) pv.pop_back();
  const std::string release = image_version.substr(0, image_version.find(' '));
  const std::string prefix = "Linux version " + release + " ";
  if (release.empty() || pv.compare(0, prefix.size(), prefix) != 0) return false;
  // "R (BY@HOST) UTS_VERSION": /proc/version has the compiler between the two
  const std::size_t open = image_version.find(" (");
  const std::size_t close = open == std::string::npos ? open : image_version.find(") ", open);
  if (close == std::string::npos) return image_version.find(' ') == std::string::npos;
  const std::string builder = image_version.substr(open + 1, close - open);  // "(BY@HOST)"
  const std::string uts = image_version.substr(close + 2);                   // "#1 SMP ... (date)"
  if (pv.compare(prefix.size(), builder.size(), builder) != 0) return false;
  return pv.size() >= uts.size() + 1 && pv.compare(pv.size() - uts.size(), uts.size(), uts) == 0 &&
         pv[pv.size() - uts.size() - 1] == ' ';
}

std::string image_change(const Kernel& k, const std::string& image_sha256, const std::string& initrd_sha256) {
  auto changed = [](const std::string& what, const std::string& path, const std::string& then, const std::string& now) {
    if (then.empty() || then == now) return std::string();
    return what + " " + path + (now.empty() ? " is gone or unreadable" : " changed") +
           " since the campaign began (sha256 " + then.substr(0, 12) + "..., now " +
           (now.empty() ? std::string("none") : now.substr(0, 12) + "...") +
           "): a package upgrade or a rebuild rewrote it; the campaign does not boot another build under this name";
  };
  std::string why = changed("image", k.image, k.sha256, image_sha256);
  if (why.empty() && !k.initrd.empty()) why = changed("initrd", k.initrd, k.initrd_sha256, initrd_sha256);
  return why;
}

int default_deadline_s(const std::vector<std::string>& run_args) {
  for (std::size_t i = 0; i < run_args.size(); ++i) {
    std::string v;
    if (run_args[i] == "--budget" && i + 1 < run_args.size()) v = run_args[i + 1];
    else if (run_args[i].rfind("--budget=", 0) == 0) v = run_args[i].substr(9);
    else continue;
    char* end = nullptr;
    const long b = std::strtol(v.c_str(), &end, 10);
    if (!v.empty() && *end == '\0' && b > 0 && b < 86400) return int(3 * b + 900);
  }
  return 7200;
}

// ---- the state file ------------------------------------------------------

namespace {

JsonValue str(const std::string& s) { return JsonValue::string(s); }

JsonValue strings(const std::vector<std::string>& v) {
  JsonValue a = JsonValue::array();
  for (const auto& s : v) a.push(str(s));
  return a;
}

JsonValue boot_json(const Boot& b) {
  JsonValue o = JsonValue::object();
  o.set("kernel", JsonValue::integer(b.kernel));
  o.set("release", str(b.release));
  o.set("boot_id", str(b.boot_id));
  o.set("at", str(b.at));
  o.set("note", str(b.note));
  o.set("step", JsonValue::integer(b.step));
  o.set("attempt", JsonValue::integer(b.attempt));
  o.set("marker", str(b.marker));
  return o;
}

std::string get(const JsonValue& j, const char* key) { return j.get_string(key).value_or(""); }

std::int64_t get_int(const JsonValue& j, const char* key, std::int64_t dflt) {
  const JsonValue* v = j.find(key);
  return v && v->as_int() ? *v->as_int() : dflt;
}

std::vector<std::string> get_strings(const JsonValue& j, const char* key) {
  std::vector<std::string> out;
  if (const JsonValue* v = j.find(key); v && v->is_array())
    for (const auto& e : v->items())
      if (e.is_string()) out.push_back(e.text());
  return out;
}

Boot boot_from(const JsonValue& j) {
  Boot b;
  b.kernel = static_cast<int>(get_int(j, "kernel", -1));
  b.release = get(j, "release");
  b.boot_id = get(j, "boot_id");
  b.at = get(j, "at");
  b.note = get(j, "note");
  b.step = static_cast<int>(get_int(j, "step", -1));
  b.attempt = static_cast<int>(get_int(j, "attempt", 0));
  b.marker = get(j, "marker");
  return b;
}

}  // namespace

JsonValue state_to_json(const State& s) {
  JsonValue o = JsonValue::object();
  o.set("schema", str("kbench-campaign/2"));
  o.set("id", str(s.id));
  o.set("mode", str(s.mode));
  o.set("status", str(s.status));
  o.set("created", str(s.created));
  o.set("ended", str(s.ended));
  o.set("dir", str(s.dir));
  o.set("bin_dir", str(s.bin_dir));
  o.set("repo", str(s.repo));
  o.set("python", str(s.python));
  o.set("run_args", strings(s.run_args));
  o.set("vm_args", strings(s.vm_args));
  o.set("append", str(s.append));
  o.set("safety", str(s.safety));
  o.set("deadline_s", JsonValue::integer(s.deadline_s));
  o.set("watchdog", str(s.watchdog));
  o.set("watchdog_module", str(s.watchdog_module));
  o.set("watchdog_s", JsonValue::integer(s.watchdog_s));
  o.set("rounds", JsonValue::integer(s.rounds));
  o.set("home_release", str(s.home_release));
  o.set("home_boot_id", str(s.home_boot_id));
  JsonValue ks = JsonValue::array();
  for (const auto& k : s.kernels) {
    JsonValue e = JsonValue::object();
    e.set("spec", str(k.spec));
    e.set("image", str(k.image));
    e.set("initrd", str(k.initrd));
    e.set("no_initrd", JsonValue::boolean(k.no_initrd));
    e.set("watchdog", JsonValue::boolean(k.watchdog));
    e.set("label", str(k.label));
    e.set("release", str(k.release));
    e.set("version", str(k.version));
    e.set("cmdline", str(k.cmdline));
    e.set("sha256", str(k.sha256));
    e.set("initrd_sha256", str(k.initrd_sha256));
    e.set("status", str(k.status));
    e.set("reason", str(k.reason));
    ks.push(std::move(e));
  }
  o.set("kernels", std::move(ks));
  JsonValue st = JsonValue::array();
  for (const auto& p : s.steps) {
    JsonValue e = JsonValue::object();
    e.set("kernel", JsonValue::integer(p.kernel));
    e.set("status", str(p.status));
    e.set("reason", str(p.reason));
    e.set("run_dir", str(p.run_dir));
    e.set("exit_code", JsonValue::integer(p.exit_code));
    e.set("boot_id", str(p.boot_id));
    e.set("started", str(p.started));
    e.set("ended", str(p.ended));
    e.set("boots", JsonValue::integer(p.boots));
    e.set("runs", JsonValue::integer(p.runs));
    e.set("boot_failures", JsonValue::integer(p.boot_failures));
    e.set("settle", str(p.settle));
    st.push(std::move(e));
  }
  o.set("steps", std::move(st));
  o.set("pending_boot", s.pending_boot ? boot_json(*s.pending_boot) : JsonValue());
  JsonValue bs = JsonValue::array();
  for (const auto& b : s.boots) bs.push(boot_json(b));
  o.set("boots", std::move(bs));
  o.set("hook_kind", str(s.hook_kind));
  o.set("hook_files", strings(s.hook_files));
  o.set("pid", JsonValue::integer(s.pid));
  return o;
}

State state_from_json(const JsonValue& j) {
  // /1: a campaign of an earlier version (status and report still read it)
  if (!j.is_object() || (get(j, "schema") != "kbench-campaign/2" && get(j, "schema") != "kbench-campaign/1"))
    throw std::runtime_error("not a kbench campaign state (schema kbench-campaign/2)");
  State s;
  s.id = get(j, "id");
  s.mode = get(j, "mode");
  s.status = get(j, "status");
  s.created = get(j, "created");
  s.ended = get(j, "ended");
  s.dir = get(j, "dir");
  s.bin_dir = get(j, "bin_dir");
  s.repo = get(j, "repo");
  s.python = get(j, "python");
  s.run_args = get_strings(j, "run_args");
  s.vm_args = get_strings(j, "vm_args");
  s.append = get(j, "append");
  s.safety = get(j, "safety");
  s.deadline_s = static_cast<int>(get_int(j, "deadline_s", 7200));
  s.watchdog = get(j, "watchdog");
  s.watchdog_module = get(j, "watchdog_module");
  s.watchdog_s = static_cast<int>(get_int(j, "watchdog_s", 0));
  s.rounds = static_cast<int>(get_int(j, "rounds", 0));
  s.home_release = get(j, "home_release");
  s.home_boot_id = get(j, "home_boot_id");
  if (s.mode != "host" && s.mode != "vm") throw std::runtime_error("unknown mode '" + s.mode + "'");
  if (s.status != "running" && s.status != "finished" && s.status != "stopped")
    throw std::runtime_error("unknown status '" + s.status + "'");
  if (const JsonValue* ks = j.find("kernels"); ks && ks->is_array())
    for (const auto& e : ks->items()) {
      Kernel k;
      k.spec = get(e, "spec");
      k.image = get(e, "image");
      k.initrd = get(e, "initrd");
      if (const JsonValue* v = e.find("no_initrd")) k.no_initrd = v->as_bool();
      if (const JsonValue* v = e.find("watchdog")) k.watchdog = v->as_bool();
      k.label = get(e, "label");
      k.release = get(e, "release");
      k.version = get(e, "version");
      k.cmdline = get(e, "cmdline");
      k.sha256 = get(e, "sha256");
      k.initrd_sha256 = get(e, "initrd_sha256");
      k.status = get(e, "status");
      k.reason = get(e, "reason");
      s.kernels.push_back(k);
    }
  if (s.kernels.empty()) throw std::runtime_error("no kernels");
  if (const JsonValue* st = j.find("steps"); st && st->is_array())
    for (const auto& e : st->items()) {
      Step p;
      p.kernel = static_cast<int>(get_int(e, "kernel", -1));
      if (p.kernel < 0 || p.kernel >= int(s.kernels.size()))
        throw std::runtime_error("a step names kernel " + std::to_string(p.kernel) + ", not one of the campaign's");
      p.status = get(e, "status");
      p.reason = get(e, "reason");
      p.run_dir = get(e, "run_dir");
      p.exit_code = static_cast<int>(get_int(e, "exit_code", -1));
      p.boot_id = get(e, "boot_id");
      p.started = get(e, "started");
      p.ended = get(e, "ended");
      p.boots = static_cast<int>(get_int(e, "boots", 0));
      p.runs = static_cast<int>(get_int(e, "runs", 0));
      p.boot_failures = static_cast<int>(get_int(e, "boot_failures", 0));
      p.settle = get(e, "settle");
      s.steps.push_back(p);
    }
  if (const JsonValue* pb = j.find("pending_boot"); pb && pb->is_object()) s.pending_boot = boot_from(*pb);
  if (const JsonValue* bs = j.find("boots"); bs && bs->is_array())
    for (const auto& e : bs->items()) s.boots.push_back(boot_from(e));
  s.hook_kind = get(j, "hook_kind");
  s.hook_files = get_strings(j, "hook_files");
  s.pid = static_cast<long>(get_int(j, "pid", 0));
  return s;
}

// ---- what next -----------------------------------------------------------

std::string kernel_name(const State& s, int kernel) {
  const auto& k = s.kernels.at(static_cast<std::size_t>(kernel));
  return std::string(1, char('A' + kernel)) + " (" + k.spec + (k.label.empty() ? "" : ", label " + k.label) + ")";
}

void mark_boot_failed(State& s, int kernel, const std::string& reason) {
  auto& k = s.kernels.at(static_cast<std::size_t>(kernel));
  k.status = "failed";
  k.reason = reason;
  for (auto& p : s.steps)
    if (p.kernel == kernel && p.status == "pending") {
      p.status = "failed";
      p.reason = "not run: the kernel failed (" + reason + ")";
    }
}

std::string boot_marker(const State& s, int step, int attempt) {
  return "kbench.campaign=" + s.id + ":" + std::to_string(step + 1) + ":" + std::to_string(attempt);
}

std::string boot_cmdline(const Kernel& k, const std::string& marker) {
  return k.cmdline.empty() ? marker : k.cmdline + " " + marker;
}

namespace {

bool cmdline_has(const std::string& cmdline, const std::string& word) {
  std::istringstream in(cmdline);
  std::string w;
  while (in >> w)
    if (w == word) return true;
  return false;
}

std::string step_name(const State& s, int step) {
  return "step " + std::to_string(step + 1) + " (" + kernel_name(s, s.steps.at(std::size_t(step)).kernel) + ")";
}

}  // namespace

Findings reconcile(State& s, const Now& now) {
  Findings f;
  if (s.pending_boot) {
    const Boot b = *s.pending_boot;
    s.pending_boot.reset();
    const Kernel& k = s.kernels.at(static_cast<std::size_t>(b.kernel));
    std::string why;
    if (now.boot_id == b.boot_id) {
      why = "the kexec did not happen (still in the boot that asked for it)";
    } else if (!cmdline_has(now.cmdline, b.marker)) {
      why = "the machine came back in " + now.release + " without the boot's marker (" + b.marker +
            "): the kernel did not come up (a panic, a hang reset by the watchdog, or a reboot through the firmware)";
    } else if (!k.version.empty() && !version_matches(k.version, now.version)) {
      why = "the boot carries its marker but runs another build: /proc/version says '" + now.version.substr(0, 160) +
            "', the image '" + k.version + "'";
    }
    if (why.empty()) {
      Boot seen = b;
      seen.release = now.release;
      seen.boot_id = now.boot_id;
      seen.at = now.time;
      seen.note = "kexec";
      s.boots.push_back(seen);
      f.said.push_back("booted " + kernel_name(s, b.kernel) + " for step " + std::to_string(b.step + 1) + ": " +
                       now.release + " (" + b.marker + ")");
    } else {
      f.failed_step = b.step;
      f.failed_attempt = b.attempt;
      auto& p = s.steps.at(std::size_t(b.step));
      ++p.boot_failures;
      if (p.boot_failures < kMaxBootAttempts) {
        p.reason = "boot " + std::to_string(b.attempt) + " failed (" + why + "): booted again";
        f.said.push_back(step_name(s, b.step) + ": boot " + std::to_string(b.attempt) + " failed: " + why +
                         "; it is tried once more");
      } else {
        const std::string reason = "its boot failed " + std::to_string(p.boot_failures) + " times; the last: " + why;
        mark_boot_failed(s, b.kernel, reason);
        f.said.push_back("kernel " + kernel_name(s, b.kernel) + ": failed: " + reason);
      }
    }
  }
  bool known = false;
  for (const auto& b : s.boots) known = known || b.boot_id == now.boot_id;
  if (!known)
    s.boots.push_back(Boot{-1, now.release, now.boot_id, now.time,
                           f.failed_step >= 0 ? "after a failed boot of " + kernel_name(s, s.steps[std::size_t(f.failed_step)].kernel)
                                              : "a boot the campaign did not ask for (the default kernel)",
                           -1, 0, ""});
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    auto& p = s.steps[i];
    if (p.status != "running") continue;
    const std::string how = p.boot_id == now.boot_id ? "the campaign process ended during it"
                                                     : "the machine rebooted, crashed or lost power during it";
    p.ended = now.time;
    if (p.runs < kMaxRuns) {
      p.status = "pending";
      p.reason = "cut once (" + how + ", started " + p.started + "): runs again on a new boot";
      p.run_dir.clear();
    } else {
      p.status = "failed";
      p.reason = "never finished (" + std::to_string(p.runs) + " runs; the last: " + how + ")";
    }
    f.said.push_back(step_name(s, int(i)) + ": " + p.reason);
  }
  return f;
}

int booted_step(const State& s, const Now& now) {
  for (auto it = s.boots.rbegin(); it != s.boots.rend(); ++it)
    if (it->boot_id == now.boot_id && it->note == "kexec") return it->step;
  return -1;
}

bool in_campaign_boot(const State& s, const Now& now) {
  if (booted_step(s, now) >= 0) return true;
  std::istringstream in(now.cmdline);
  std::string w;
  const std::string ours = "kbench.campaign=" + s.id + ":";
  while (in >> w)
    if (w.rfind(ours, 0) == 0) return true;
  return false;
}

Action next_action(State& s, const Now& now) {
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    auto& p = s.steps[i];
    if (p.status != "pending") continue;
    if (s.kernels.at(std::size_t(p.kernel)).status != "ok") {
      p.status = "failed";
      p.reason = "not run: the kernel failed (" + s.kernels[std::size_t(p.kernel)].reason + ")";
      continue;
    }
    // a boot made for this step, not yet used by one of its runs
    if (s.mode == "vm" || (booted_step(s, now) == int(i) && p.boot_id != now.boot_id))
      return {ActionKind::run, int(i), p.kernel, false};
    return {ActionKind::boot, int(i), p.kernel, false};
  }
  return {ActionKind::finish, -1, -1, s.mode == "host" && in_campaign_boot(s, now)};
}

void mark_boot_requested(State& s, int step, const std::string& marker, const Now& now) {
  auto& p = s.steps.at(std::size_t(step));
  ++p.boots;
  s.pending_boot = Boot{p.kernel, s.kernels.at(std::size_t(p.kernel)).release, now.boot_id, now.time, "requested",
                        step, p.boots, marker};
}

void mark_step_running(State& s, int step, const Now& now) {
  auto& p = s.steps.at(std::size_t(step));
  p.status = "running";
  ++p.runs;
  p.boot_id = now.boot_id;
  p.started = now.time;
  p.ended.clear();
  p.reason.clear();
}

void mark_step_ended(State& s, int step, int exit_code, const std::string& run_dir, const std::string& reason,
                     const Now& now) {
  auto& p = s.steps.at(std::size_t(step));
  p.exit_code = exit_code;
  p.run_dir = run_dir;
  p.ended = now.time;
  p.status = reason.empty() ? "done" : "failed";
  p.reason = reason;
}

void mark_step_interrupted(State& s, int step) {
  auto& p = s.steps.at(std::size_t(step));
  if (p.runs >= kMaxRuns) {
    p.status = "failed";
    p.reason = "interrupted " + std::to_string(p.runs) + " times";
    return;
  }
  p.status = "pending";
  p.reason = "interrupted once (" + p.started + "): runs again";
  p.started.clear();
  p.run_dir.clear();
}

void mark_finished(State& s, const std::string& status, const Now& now) {
  s.status = status;
  s.ended = now.time;
  s.pending_boot.reset();
}

std::string step_counts(const State& s) {
  int done = 0, failed = 0, pending = 0;
  for (const auto& p : s.steps) {
    if (p.status == "done") ++done;
    else if (p.status == "failed") ++failed;
    else ++pending;
  }
  return std::to_string(done) + " done, " + std::to_string(failed) + " failed, " + std::to_string(pending) +
         " not run";
}

long iso_epoch(const std::string& iso) {
  int y, mo, d, h, mi, sec;
  char z = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &z) != 7 || z != 'Z') return -1;
  // days from 1970-01-01 to y-mo-d in the proleptic Gregorian calendar
  const int yy = y - (mo <= 2);
  const long era = (yy >= 0 ? yy : yy - 399) / 400;
  const long yoe = yy - era * 400;
  const long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const long days = era * 146097 + doe - 719468;
  return days * 86400 + h * 3600L + mi * 60L + sec;
}

std::string eta_text(const State& s, long now_epoch) {
  int ended = 0, left = 0;
  for (const auto& p : s.steps) {
    if (p.status == "done" || p.status == "failed") ++ended;
    else ++left;
  }
  const long t0 = iso_epoch(s.created);
  if (left == 0) return "ETA: the end (every step has ended)";
  if (ended == 0 || t0 < 0 || now_epoch < t0) return "ETA: known when the first step has ended (" + std::to_string(left) + " steps left)";
  const long per = (now_epoch - t0) / ended;
  auto span = [](long sec) {
    if (sec < 120) return std::to_string(sec) + " s";
    if (sec < 7200) return std::to_string((sec + 30) / 60) + " min";
    return std::to_string(sec / 3600) + " h " + std::to_string((sec % 3600 + 30) / 60) + " min";
  };
  return "ETA: about " + span(per * left) + " (" + std::to_string(left) + " steps left at " + span(per) +
         " a step so far, boots included)";
}

// ---- refusals ------------------------------------------------------------

std::string kexec_refusal(const Probe& p) {
  if (auto d = p.read_file("/proc/sys/kernel/kexec_load_disabled"); d && d->rfind("1", 0) == 0)
    return "kexec is disabled on this boot (kernel.kexec_load_disabled = 1; it stays so until a reboot)";
  // Lockdown is no reason by itself: a locked-down kernel still kexecs an
  // image whose signature verifies. The trial load of each image tells.
  const int e = p.kexec_probe();
  if (e == ENOSYS)
    return "this kernel has no kexec_file_load (CONFIG_KEXEC_FILE is not set): use make vm-campaign";
  if (e == EPERM) return "kexec_file_load is not permitted here (needs CAP_SYS_BOOT; in a container?)";
  if (e != 0) return std::string("kexec_file_load does not work here: ") + errno_name(e) + " (" + std::strerror(e) + ")";
  return "";
}

std::string start_refusal(const Probe& p, const State& s, const std::string& running) {
  if (!running.empty())
    return "a campaign is already running (" + running + "): wait for it, or make campaign-stop";
  if (s.mode == "vm") return "";
  for (std::size_t i = 0; i < s.kernels.size(); ++i)
    if (!p.is_file(s.kernels[i].image)) return "kernel " + kernel_name(s, int(i)) + ": no such image: " + s.kernels[i].image;
  for (std::size_t i = 0; i < s.kernels.size(); ++i) {
    const auto& k = s.kernels[i];
    const std::string name = "kernel " + kernel_name(s, int(i));
    if (!k.initrd.empty() && !p.is_file(k.initrd)) return name + ": no such initrd: " + k.initrd;
    if (k.initrd.empty() && !k.no_initrd) {
      std::string looked;
      for (const auto& c : initrd_candidates(k.image, k.release)) looked += (looked.empty() ? "" : ", ") + c;
      return name + ": no initrd found (looked for " + looked +
             "): give ,initrd=FILE (update-initramfs -c -k RELEASE or dracut makes one), or ,initrd=none "
             "for a kernel that mounts its root without one (no root=UUID=, LVM or dm-crypt, its disk driver built in)";
    }
  }
  if (p.euid() != 0) return "needs root: it loads kernels and reboots the machine (sudo make campaign ...)";
  if (std::string why = kexec_refusal(p); !why.empty()) return why;
  const std::string lockdown = p.read_file("/sys/kernel/security/lockdown").value_or("");
  for (std::size_t i = 0; i < s.kernels.size(); ++i)
    if (const int e = p.trial_load(s.kernels[i]); e != 0)
      return "kernel " + kernel_name(s, int(i)) + ": a trial kexec_file_load refused it, before any reboot: " +
             load_refusal(e, lockdown);
  return "";
}

std::vector<std::string> start_warnings(const Probe& p, const State& s) {
  std::vector<std::string> out;
  if (s.mode == "vm") return out;
  for (std::size_t i = 0; i < s.kernels.size(); ++i) {
    const auto& k = s.kernels[i];
    if (!k.release.empty() && k.release != "unknown" && !p.is_dir("/lib/modules/" + k.release))
      out.push_back("kernel " + kernel_name(s, int(i)) + ": no /lib/modules/" + k.release +
                    ": the modules it needs (disk, network, file systems) may be missing in its boot");
  }
  return out;
}

}  // namespace kbench::campaign
