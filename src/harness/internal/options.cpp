// options.cpp — parsing of the shared benchmark options.
#include "harness/internal/options.hpp"

#include <cerrno>
#include <climits>

namespace kbench {

bool parse_u64(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

namespace {

bool valid_param_key(const std::string& k) {
  if (k.empty() || k.size() > 64) return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// Values end up in the canonical "k=v,k=v" string, so ',' and '=' are out,
// as are control characters.
bool valid_param_value(const std::string& v) {
  if (v.empty() || v.size() > 4096) return false;
  for (unsigned char c : v)
    if (c < 0x20 || c == 0x7F || c == ',' || c == '=') return false;
  return true;
}

bool valid_run_id(const std::string& v) {
  if (v.size() > 128) return false;
  for (unsigned char c : v)
    if (c < 0x20 || c == 0x7F) return false;
  return true;
}

}  // namespace

ParseResult parse_options(const std::vector<std::string>& args) {
  ParseResult r;
  Options& o = r.options;
  auto fail = [&r](std::string msg) {
    r.error = std::move(msg);
    return r;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.size() < 2 || arg[0] != '-' || arg[1] != '-') {
      if (!arg.empty() && arg[0] == '-') return fail("unknown option '" + arg + "'");
      if (!o.variant.empty()) return fail("more than one variant given: '" + o.variant + "' and '" + arg + "'");
      if (arg.empty()) return fail("empty variant");
      o.variant = arg;
      continue;
    }
    std::string name = arg;
    std::optional<std::string> value;
    const auto eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    auto flag = [&](bool& target) -> bool {
      if (value) {
        r.error = "option " + name + " takes no value";
        return false;
      }
      target = true;
      return true;
    };
    auto need_value = [&]() -> bool {
      if (value) return true;
      if (i + 1 >= args.size()) {
        r.error = "option " + name + " needs a value";
        return false;
      }
      value = args[++i];
      return true;
    };
    auto number = [&](std::uint64_t& target, std::uint64_t lo, std::uint64_t hi) -> bool {
      if (!need_value()) return false;
      std::uint64_t v;
      if (!parse_u64(*value, v) || v < lo || v > hi) {
        r.error = "bad value '" + *value + "' for " + name + " (a whole number from " +
                  std::to_string(lo) + " to " + std::to_string(hi) + ")";
        return false;
      }
      target = v;
      return true;
    };
    auto cpu_number = [&](std::optional<int>& target) -> bool {
      std::uint64_t v = 0;
      if (!number(v, 0, 65535)) return false;
      target = static_cast<int>(v);
      return true;
    };

    if (name == "--help") {
      if (!flag(o.help)) return r;
    } else if (name == "--list") {
      if (!flag(o.list)) return r;
    } else if (name == "--samples") {
      if (!number(o.samples, 1, 1000000)) return r;
    } else if (name == "--warmup-ms") {
      if (!number(o.warmup_ms, 0, 3600000)) return r;
      o.warmup_given = true;
    } else if (name == "--min-sample-ms") {
      if (!number(o.min_sample_ms, 0, 3600000)) return r;
    } else if (name == "--iters") {
      std::uint64_t v = 0;
      if (!number(v, 1, UINT64_MAX / 2)) return r;
      o.iters = v;
    } else if (name == "--cpu") {
      if (!cpu_number(o.cpu)) return r;
    } else if (name == "--partner-cpu") {
      if (!cpu_number(o.partner_cpu)) return r;
    } else if (name == "--rep") {
      if (!number(o.rep, 0, 1000000000)) return r;
    } else if (name == "--run-id") {
      if (!need_value()) return r;
      if (!valid_run_id(*value)) return fail("bad value for --run-id (at most 128 printable characters)");
      o.run_id = *value;
    } else if (name == "--param") {
      if (!need_value()) return r;
      const auto peq = value->find('=');
      if (peq == std::string::npos) return fail("bad --param '" + *value + "': expected KEY=VALUE");
      const std::string k = value->substr(0, peq), v = value->substr(peq + 1);
      if (!valid_param_key(k)) return fail("bad --param key '" + k + "': lower-case letters, digits and _ only");
      if (!valid_param_value(v)) return fail("bad --param value for '" + k + "': empty, or contains ',', '=' or a control character");
      o.params[k] = v;
    } else if (name == "--counters") {
      o.counters = value ? *value : std::string();
    } else {
      return fail("unknown option '" + name + "'");
    }
  }
  return r;
}

std::string usage_text(const std::string& prog, const std::vector<std::string>& variants) {
  std::string v;
  for (const auto& s : variants) v += (v.empty() ? "" : "|") + s;
  return "usage: " + prog + " [" + v + "] [options]\n"
         "\n"
         "Options (shared by every kbench binary):\n"
         "  --samples N         samples per process (default 10)\n"
         "  --warmup-ms MS      run the operation this long before measuring (default 5;\n"
         "                      0 with --iters unless given)\n"
         "  --min-sample-ms MS  calibrate iterations so one sample lasts at least MS (default 2)\n"
         "  --iters K           fixed K operations per sample, no calibration (deterministic)\n"
         "  --cpu C             pin the timing process to CPU C\n"
         "  --partner-cpu C     pin the partner process(es) to CPU C (two-party cases)\n"
         "  --param K=V         set a parameter of the case (repeatable); see --list\n"
         "  --counters[=LIST]   per-sample perf counters (see README)\n"
         "  --run-id ID         stamped into every sample (set by kbench-run)\n"
         "  --rep N             repetition index stamped into every sample (set by kbench-run)\n"
         "  --list              print the cases of this binary as JSON Lines and exit\n"
         "  --help              this text\n"
         "\n"
         "Output: one JSON object per sample on stdout, one summary line per case on stderr.\n"
         "Exit: 0 ok, 1 failure, 2 usage error, 77 skipped, 128+N killed by signal N.\n";
}

}  // namespace kbench
