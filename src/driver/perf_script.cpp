// perf_script.cpp — `perf script` text to the compact profile (see perf_script.hpp).
//
// A function is named by its symbol (kernel) or symbol and object file
// (user: `main` of two programs are two functions). An unresolved sampled
// function is "[unknown] in CALLER" (its nearest resolved caller); other
// unresolved frames are "[unknown]" of their object file, and are left out
// of the caller summaries, where they say nothing.
#include "driver/perf_script.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kbench::driver {

namespace {

struct Frame {
  std::string symbol, dso;
  bool kernel = false;
  bool unknown = false;
  std::string key() const { return kernel ? "k\x1f" + symbol : "u\x1f" + symbol + "\x1f" + dso; }
};

struct Symbol {
  std::string symbol, dso;
  bool kernel = false;
  double self = 0, inclusive = 0;
  long long samples = 0;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// "ADDR SYMBOL (DSO)", SYMBOL possibly with spaces (demangled C++) and with
// "+0xOFF" when perf was asked for offsets.
bool parse_frame(std::string_view line, Frame& f) {
  line = trim(line);
  if (line.empty()) return false;
  const auto sp = line.find(' ');
  const std::string addr(line.substr(0, sp));
  char* end = nullptr;
  const unsigned long long ip = std::strtoull(addr.c_str(), &end, 16);
  if (addr.empty() || *end != '\0') return false;
  std::string_view rest = sp == std::string_view::npos ? std::string_view() : trim(line.substr(sp + 1));
  std::string_view dso;
  if (!rest.empty() && rest.back() == ')') {
    const auto open = rest.rfind(" (");
    if (open != std::string_view::npos) {
      dso = rest.substr(open + 2, rest.size() - open - 3);
      rest = trim(rest.substr(0, open));
    } else if (rest.front() == '(') {
      dso = rest.substr(1, rest.size() - 2);
      rest = {};
    }
  }
  if (const auto plus = rest.rfind("+0x"); plus != std::string_view::npos && plus > 0) {
    const std::string_view off = rest.substr(plus + 3);
    if (!off.empty() && off.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos)
      rest = rest.substr(0, plus);
  }
  f.unknown = rest.empty() || rest == "[unknown]";
  f.symbol = f.unknown ? "[unknown]" : std::string(rest);
  // Kernel text is the upper half of the address space on the 64-bit
  // architectures kbench runs on; the object name covers the others.
  f.kernel = (ip >> 63) != 0 || dso.rfind("[kernel.", 0) == 0 || dso.rfind("[guest.kernel", 0) == 0;
  f.dso = f.kernel ? std::string(dso.empty() ? "[kernel]" : dso) : basename_of(dso.empty() ? "[unknown]" : dso);
  return true;
}

double round6(double x) { return std::round(x * 1e6) / 1e6; }

struct Sample {
  double period = 1;
  std::vector<Frame> frames;
};

class Accumulator {
 public:
  void add(const Sample& s) {
    if (s.frames.empty()) return;
    ++samples_;
    total_ += s.period;
    // An unresolved function (JIT-compiled BPF, a module without symbols)
    // is named after the nearest resolved function that called it: the
    // seccomp filter's program is "[unknown] in __seccomp_filter".
    Frame leaf = s.frames.front();
    if (leaf.unknown)
      for (std::size_t i = 1; i < s.frames.size(); ++i)
        if (!s.frames[i].unknown) {
          leaf.symbol = "[unknown] in " + s.frames[i].symbol;
          break;
        }
    (leaf.kernel ? kernel_samples_ : user_samples_) += 1;
    (leaf.kernel ? kernel_w_ : user_w_) += s.period;
    Symbol& sym = at(leaf);
    sym.self += s.period;
    sym.samples += 1;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < s.frames.size(); ++i) {
      const Frame& f = i == 0 ? leaf : s.frames[i];
      if (seen.insert(f.key()).second) at(f).inclusive += s.period;
    }
    // The named callers above the sampled function, nearest first.
    std::string path;
    int depth = 0;
    for (std::size_t i = 1; i < s.frames.size() && depth < 3; ++i) {
      if (s.frames[i].unknown) continue;
      path += (depth ? "\x1f" : "") + s.frames[i].symbol;
      ++depth;
    }
    if (leaf.symbol != "[unknown]" && depth > 0) callers_[leaf.key()][path] += s.period;
  }

  JsonValue result(const std::string& event) const {
    JsonValue j = JsonValue::object();
    j.set("event", event.empty() ? JsonValue() : JsonValue::string(event));
    j.set("samples", JsonValue::integer(samples_));
    j.set("kernel_samples", JsonValue::integer(kernel_samples_));
    j.set("user_samples", JsonValue::integer(user_samples_));
    j.set("kernel_share", total_ > 0 ? JsonValue::real(round6(kernel_w_ / total_)) : JsonValue());
    double listed_k = 0, listed_u = 0;
    j.set("kernel_symbols", side(true, listed_k));
    j.set("user_symbols", side(false, listed_u));
    j.set("kernel_other_share", JsonValue::real(total_ > 0 ? round6(std::max(0.0, (kernel_w_ - listed_k) / total_)) : 0));
    j.set("user_other_share", JsonValue::real(total_ > 0 ? round6(std::max(0.0, (user_w_ - listed_u) / total_)) : 0));
    j.set("chains", chains());
    return j;
  }

 private:
  Symbol& at(const Frame& f) {
    auto [it, fresh] = symbols_.try_emplace(f.key());
    if (fresh) {
      it->second.symbol = f.symbol;
      it->second.dso = f.dso;
      it->second.kernel = f.kernel;
    }
    return it->second;
  }

  // The keys of one side's functions, busiest (self) first; ties by name
  // so that the output does not depend on the map's order.
  std::vector<const std::pair<const std::string, Symbol>*> ranked(bool kernel, bool by_inclusive) const {
    std::vector<const std::pair<const std::string, Symbol>*> v;
    for (const auto& kv : symbols_)
      if (kv.second.kernel == kernel) v.push_back(&kv);
    std::sort(v.begin(), v.end(), [by_inclusive](auto* a, auto* b) {
      const double x = by_inclusive ? a->second.inclusive : a->second.self;
      const double y = by_inclusive ? b->second.inclusive : b->second.self;
      if (x != y) return x > y;
      return a->first < b->first;
    });
    return v;
  }

  JsonValue side(bool kernel, double& listed_self) const {
    std::set<std::string> keep;
    const auto by_self = ranked(kernel, false);
    const auto by_incl = ranked(kernel, true);
    for (std::size_t i = 0; i < by_self.size() && i < std::size_t(kProfileTopSymbols); ++i)
      if (by_self[i]->second.self > 0) keep.insert(by_self[i]->first);
    for (std::size_t i = 0; i < by_incl.size() && i < std::size_t(kProfileTopSymbols); ++i)
      keep.insert(by_incl[i]->first);
    JsonValue list = JsonValue::array();
    for (const auto* kv : by_self) {
      if (!keep.count(kv->first)) continue;
      const Symbol& s = kv->second;
      listed_self += s.self;
      JsonValue o = JsonValue::object();
      o.set("symbol", JsonValue::string(s.symbol));
      o.set("dso", JsonValue::string(s.dso));
      o.set("samples", JsonValue::integer(s.samples));
      o.set("share", JsonValue::real(round6(s.self / total_)));
      o.set("inclusive_share", JsonValue::real(round6(s.inclusive / total_)));
      list.push(o);
    }
    return list;
  }

  JsonValue chains() const {
    JsonValue list = JsonValue::array();
    for (bool kernel : {true, false}) {
      int n = 0;
      for (const auto* kv : ranked(kernel, false)) {
        if (n >= kProfileChainSymbols || kv->second.self <= 0) break;
        const auto it = callers_.find(kv->first);
        if (it == callers_.end()) continue;
        std::vector<std::pair<double, std::string>> paths;
        for (const auto& [p, w] : it->second) paths.emplace_back(w, p);
        std::sort(paths.begin(), paths.end(), [](const auto& a, const auto& b) {
          return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        JsonValue callers = JsonValue::array();
        for (std::size_t i = 0; i < paths.size() && i < 3; ++i) {
          JsonValue chain = JsonValue::array();
          std::string_view rest = paths[i].second;
          for (;;) {
            const auto sep = rest.find('\x1f');
            chain.push(JsonValue::string(std::string(rest.substr(0, sep))));
            if (sep == std::string_view::npos) break;
            rest.remove_prefix(sep + 1);
          }
          JsonValue c = JsonValue::object();
          c.set("callers", chain);
          c.set("share_of_symbol", JsonValue::real(round6(paths[i].first / kv->second.self)));
          callers.push(c);
        }
        JsonValue o = JsonValue::object();
        o.set("symbol", JsonValue::string(kv->second.symbol));
        o.set("space", JsonValue::string(kernel ? "kernel" : "user"));
        o.set("share", JsonValue::real(round6(kv->second.self / total_)));
        o.set("top_callers", callers);
        list.push(o);
        ++n;
      }
    }
    return list;
  }

  std::map<std::string, Symbol> symbols_;
  std::map<std::string, std::map<std::string, double>> callers_;
  long long samples_ = 0, kernel_samples_ = 0, user_samples_ = 0;
  double total_ = 0, kernel_w_ = 0, user_w_ = 0;
};

// The header of a sample: "PERIOD EVENT:" in whatever order perf prints
// them, and a frame after the event when the recording has no call chains.
void parse_header(std::string_view line, Sample& s, std::string& event) {
  std::string_view rest = trim(line);
  while (!rest.empty()) {
    const auto sp = rest.find_first_of(" \t");
    const std::string_view tok = rest.substr(0, sp);
    rest = sp == std::string_view::npos ? std::string_view() : trim(rest.substr(sp + 1));
    if (tok.find_first_not_of("0123456789") == std::string_view::npos) {
      s.period = std::max(1.0, std::strtod(std::string(tok).c_str(), nullptr));
    } else if (tok.back() == ':') {
      if (event.empty()) event = std::string(tok.substr(0, tok.find(':')));
      Frame f;
      if (!rest.empty() && parse_frame(rest, f)) s.frames.push_back(f);
      return;
    }
  }
}

}  // namespace

JsonValue summarize_perf_script(std::string_view text) {
  Accumulator acc;
  std::string event;
  Sample current;
  bool in_sample = false;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (trim(line).empty()) {
      if (in_sample) acc.add(current);
      in_sample = false;
      continue;
    }
    if (line.front() == '\t') {
      Frame f;
      if (in_sample && parse_frame(line, f)) current.frames.push_back(f);
      continue;
    }
    if (in_sample) acc.add(current);
    current = Sample{};
    in_sample = true;
    parse_header(line, current, event);
  }
  if (in_sample) acc.add(current);
  return acc.result(event);
}

}  // namespace kbench::driver
