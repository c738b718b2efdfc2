// discover.cpp — run `BIN --list` for every binary and parse the case lines.
//
// Executables are found with readdir + stat (following symlinks, so an
// installed tree of links works) + access(X_OK); the driver itself and its
// helpers share the `kbench-` prefix and are left out, as are hidden files.
#include "driver/discover.hpp"

#include <dirent.h>
#include <regex.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

#include "driver/json_value.hpp"
#include "driver/spawn.hpp"

namespace kbench::driver {

namespace {

std::vector<std::string> executables(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) throw std::runtime_error("cannot read --bin-dir " + dir + ": " + std::strerror(errno));
  std::vector<std::string> names;
  // readdir reports errors only through errno, so clear it before every
  // call: stat/access below set it for files we merely skip.
  for (;;) {
    errno = 0;
    const dirent* e = readdir(d);
    if (!e) break;
    const std::string name = e->d_name;
    if (name.empty() || name[0] == '.' || name.rfind("kbench-", 0) == 0) continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (access(path.c_str(), X_OK) != 0) continue;
    names.push_back(name);
  }
  const int read_errno = errno;
  if (closedir(d) != 0 || read_errno != 0)
    throw std::runtime_error("reading --bin-dir " + dir + ": " +
                             std::strerror(read_errno ? read_errno : errno));
  std::sort(names.begin(), names.end());
  return names;
}

// Parses one --list line into `c`; returns an error text or "".
std::string parse_case(const std::string& line, Case& c) {
  std::string err;
  auto v = json_parse(line, &err);
  if (!v) return "not JSON (" + err + ")";
  if (!v->is_object()) return "not a JSON object";
  const struct {
    const char* key;
    std::string* into;
  } fields[] = {{"bench", &c.bench},         {"variant", &c.variant}, {"params", &c.params},
                {"placement", &c.placement}, {"case", &c.name},       {"metric", &c.metric}};
  for (const auto& f : fields) {
    auto s = v->get_string(f.key);
    if (!s) return std::string("no string \"") + f.key + "\"";
    *f.into = *s;
  }
  if (c.name.empty()) return "empty \"case\"";
  // Optional: binaries older than control cases do not say.
  if (const JsonValue* ctl = v->find("control")) c.control = ctl->as_bool();
  const JsonValue* args = v->find("args");
  if (!args || !args->is_array()) return "no \"args\" array";
  for (const auto& a : args->items()) {
    if (!a.is_string()) return "\"args\" holds a non-string";
    c.args.push_back(a.text());
  }
  return "";
}

}  // namespace

std::string last_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' '))
      --end;
    if (end == 0) break;
    const std::size_t nl = text.rfind('\n', end - 1);
    const std::size_t start = nl == std::string::npos ? 0 : nl + 1;
    std::string line = text.substr(start, end - start);
    if (!line.empty()) return line;
    end = start;
  }
  return "";
}

Discovery discover(const std::string& bin_dir, double timeout_s) {
  Discovery d;
  std::set<std::string> seen;
  for (const auto& name : executables(bin_dir)) {
    const std::string path = bin_dir + "/" + name;
    const SpawnResult r = spawn_and_wait({path, "--list"}, timeout_s);
    ListFailure f{name, "", ""};
    if (!r.started) {
      f.status = "failed";
      f.reason = r.error;
    } else if (r.interrupted) {
      f.status = "interrupted";
      f.reason = "the driver was interrupted";
    } else if (r.timed_out) {
      f.status = "timeout";
      f.reason = "--list did not finish in time";
    } else if (r.signaled) {
      f.status = "crashed";
      f.reason = std::string("--list killed by signal ") + std::to_string(r.term_signal) + " (" +
                 strsignal(r.term_signal) + ")";
    } else if (r.exit_code == 77) {
      f.status = "skipped";
      f.reason = last_line(r.err_tail);
    } else if (r.exit_code != 0) {
      f.status = "failed";
      f.reason = "--list exited " + std::to_string(r.exit_code) + ": " + last_line(r.err_tail);
    }
    if (!f.status.empty()) {
      d.failures.push_back(f);
      continue;
    }
    std::vector<Case> found;
    std::size_t pos = 0, lineno = 0;
    std::string bad;
    while (pos < r.out.size()) {
      std::size_t nl = r.out.find('\n', pos);
      if (nl == std::string::npos) nl = r.out.size();
      const std::string line = r.out.substr(pos, nl - pos);
      pos = nl + 1;
      ++lineno;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      Case c;
      const std::string err = parse_case(line, c);
      if (!err.empty()) {
        bad = "--list line " + std::to_string(lineno) + ": " + err;
        break;
      }
      c.binary = path;
      c.declaration = line;
      found.push_back(std::move(c));
    }
    if (!bad.empty()) {
      d.failures.push_back({name, "failed", bad});
      continue;
    }
    if (found.empty()) {
      d.failures.push_back({name, "failed", "--list printed no cases"});
      continue;
    }
    for (auto& c : found) {
      // Two cases with one name would be merged by every reader; keep the first.
      if (!seen.insert(c.name).second) {
        d.failures.push_back({name, "failed", "duplicate case '" + c.name + "' ignored"});
        continue;
      }
      d.cases.push_back(std::move(c));
    }
  }
  return d;
}

std::vector<Case> select_cases(const std::vector<Case>& all, const std::string& only,
                               const std::string& skip) {
  regex_t only_re, skip_re;
  // Both were compiled once already while parsing the options.
  if (!only.empty() && regcomp(&only_re, only.c_str(), REG_EXTENDED | REG_NOSUB) != 0)
    throw std::runtime_error("bad --only regex");
  if (!skip.empty() && regcomp(&skip_re, skip.c_str(), REG_EXTENDED | REG_NOSUB) != 0) {
    if (!only.empty()) regfree(&only_re);
    throw std::runtime_error("bad --skip regex");
  }
  std::vector<Case> out;
  for (const auto& c : all) {
    if (!only.empty() && regexec(&only_re, c.name.c_str(), 0, nullptr, 0) != 0) continue;
    if (!skip.empty() && regexec(&skip_re, c.name.c_str(), 0, nullptr, 0) == 0) continue;
    out.push_back(c);
  }
  if (!only.empty()) regfree(&only_re);
  if (!skip.empty()) regfree(&skip_re);
  return out;
}

}  // namespace kbench::driver
