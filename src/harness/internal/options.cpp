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

// A word that does not start with "--": the variant (only one).
void set_variant(Options& o, const std::string& arg) {
  if (!arg.empty() && arg[0] == '-') throw UsageError{"unknown option '" + arg + "'"};
  if (!o.variant.empty()) throw UsageError{"more than one variant given: '" + o.variant + "' and '" + arg + "'"};
  if (arg.empty()) throw UsageError{"empty variant"};
  o.variant = arg;
}

std::uint64_t whole_number(const std::string& name, const std::string& value, std::uint64_t lo, std::uint64_t hi) {
  std::uint64_t v;
  if (!parse_u64(value, v) || v < lo || v > hi)
    throw UsageError{"bad value '" + value + "' for " + name + " (a whole number from " + std::to_string(lo) +
                     " to " + std::to_string(hi) + ")"};
  return v;
}

std::string run_id(const std::string& value) {
  if (!valid_run_id(value)) throw UsageError{"bad value for --run-id (at most 128 printable characters)"};
  return value;
}

// --param KEY=VALUE
void add_param(std::map<std::string, std::string>& params, const std::string& value) {
  const auto eq = value.find('=');
  if (eq == std::string::npos) throw UsageError{"bad --param '" + value + "': expected KEY=VALUE"};
  const std::string k = value.substr(0, eq), v = value.substr(eq + 1);
  if (!valid_param_key(k)) throw UsageError{"bad --param key '" + k + "': lower-case letters, digits and _ only"};
  if (!valid_param_value(v))
    throw UsageError{"bad --param value for '" + k + "': empty, or contains ',', '=' or a control character"};
  params[k] = v;
}

}  // namespace

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-' || arg[1] != '-') {
      set_variant(o, arg);
      continue;
    }
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const std::optional<std::string> value =
        eq == std::string::npos ? std::nullopt : std::optional<std::string>(arg.substr(eq + 1));
    auto flag = [&] {
      if (value) throw UsageError{"option " + name + " takes no value"};
      return true;
    };
    auto text = [&]() -> std::string {
      if (value) return *value;
      if (i + 1 >= args.size()) throw UsageError{"option " + name + " needs a value"};
      return args[++i];
    };
    auto number = [&](std::uint64_t lo, std::uint64_t hi) { return whole_number(name, text(), lo, hi); };
    auto cpu = [&] { return static_cast<int>(number(0, 65535)); };

    if (name == "--help") {
      o.help = flag();
    } else if (name == "--list") {
      o.list = flag();
    } else if (name == "--samples") {
      o.samples = number(1, 1000000);
    } else if (name == "--warmup-ms") {
      o.warmup_ms = number(0, 3600000);
      o.warmup_given = true;
    } else if (name == "--min-sample-ms") {
      o.min_sample_ms = number(0, 3600000);
    } else if (name == "--iters") {
      o.iters = number(1, UINT64_MAX / 2);
    } else if (name == "--cpu") {
      o.cpu = cpu();
    } else if (name == "--partner-cpu") {
      o.partner_cpu = cpu();
    } else if (name == "--rep") {
      o.rep = number(0, 1000000000);
    } else if (name == "--run-id") {
      o.run_id = run_id(text());
    } else if (name == "--param") {
      add_param(o.params, text());
    } else if (name == "--counters") {
      o.counters = value.value_or("");
    } else if (name == "--copies") {
      const std::string v = text();
      o.copies = v == "all" ? 0 : whole_number(name, v, 1, 4096);
    } else if (name == "--oversubscribe") {
      o.oversubscribe = flag();
    } else if (name == "--threads") {
      o.copy_threads = flag();
    } else if (name == "--cross-pairs") {
      o.cross_pairs = flag();
    } else {
      throw UsageError{"unknown option '" + name + "'"};
    }
  }
  if ((o.oversubscribe || o.copy_threads || o.cross_pairs) && !o.copies)
    throw UsageError{std::string(o.oversubscribe ? "--oversubscribe" : o.copy_threads ? "--threads" : "--cross-pairs") +
                     " needs --copies"};
  if (o.copies && (o.cpu || o.partner_cpu))
    throw UsageError{"--copies places every copy itself: no --cpu or --partner-cpu (reference: running.md, Scaling)"};
  return o;
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
         "  --counters[=LIST]   per-sample perf counters (src/reference/running.md)\n"
         "  --copies N|all      run N copies of the case at once, copy i pinned to the i-th\n"
         "                      allowed CPU (its partner too), released together (src/reference/running.md)\n"
         "  --oversubscribe     with --copies: allow more copies than CPUs (copy i on CPU i mod n)\n"
         "  --threads           with --copies: copies are threads of one process (one-party cases)\n"
         "  --cross-pairs       with --copies: copy i's partner on the next allowed CPU (i+1 mod n)\n"
         "  --run-id ID         stamped into every sample (set by kbench-run)\n"
         "  --rep N             repetition index stamped into every sample (set by kbench-run)\n"
         "  --list              print the cases of this binary as JSON Lines and exit\n"
         "  --help              this text\n"
         "\n"
         "Output: one JSON object per sample on stdout, one summary line per case on stderr.\n"
         "Exit: 0 ok, 1 failure, 2 usage error, 77 skipped, 128+N killed by signal N.\n";
}

}  // namespace kbench
