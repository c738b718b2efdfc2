// cases.cpp — case construction helpers, names and --list output.
#include "harness/cases.hpp"

#include "harness/json.hpp"

namespace kbench {

namespace {

class LambdaFixture final : public Fixture {
 public:
  explicit LambdaFixture(std::function<void(std::uint64_t)> fn) : fn_(std::move(fn)) {}
  void run(std::uint64_t iters) override { fn_(iters); }

 private:
  std::function<void(std::uint64_t)> fn_;
};

}  // namespace

CaseSpec simple_case(std::string variant, std::function<void(std::uint64_t)> fn, Params params) {
  return CaseSpec{std::move(variant), std::move(params), Metric::latency, false,
                  [fn] { return std::unique_ptr<Fixture>(new LambdaFixture(fn)); }};
}

std::vector<CaseSpec> sweep(const CaseSpec& base, const std::string& key,
                            const std::vector<std::string>& values) {
  std::vector<CaseSpec> out;
  for (const auto& v : values) {
    CaseSpec c = base;
    c.params[key] = v;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<CaseSpec> cases(std::initializer_list<std::vector<CaseSpec>> lists) {
  std::vector<CaseSpec> out;
  for (const auto& l : lists) out.insert(out.end(), l.begin(), l.end());
  return out;
}

std::string canonical_params(const Params& p) {
  std::string s;
  for (const auto& [k, v] : p) {
    if (!s.empty()) s += ',';
    s += k + "=" + v;
  }
  return s;
}

const char* metric_name(Metric m) { return m == Metric::bandwidth ? "bandwidth" : "latency"; }

std::string placement_name(bool two_party, std::optional<int> cpu, std::optional<int> partner_cpu) {
  if (!two_party) return cpu ? "pinned" : "unpinned";
  if (cpu && partner_cpu) return *cpu == *partner_cpu ? "same" : "cross";
  if (!cpu && !partner_cpu) return "unpinned";
  return "mixed";
}

std::string case_name(const std::string& bench, const std::string& variant, const Params& p,
                      bool two_party, const std::string& placement) {
  std::string s = bench + " " + variant;
  const std::string params = canonical_params(p);
  if (!params.empty()) s += " " + params;
  if (two_party) s += " @" + placement;
  return s;
}

std::vector<std::string> list_lines(const std::string& bench, const std::vector<CaseSpec>& specs,
                                    const std::vector<int>& cpus) {
  std::vector<std::string> out;
  const int a = cpus.empty() ? 0 : cpus[0];
  const int b = cpus.size() > 1 ? cpus[1] : a + 1;
  for (const auto& spec : specs) {
    std::vector<std::string> base{spec.variant};
    for (const auto& [k, v] : spec.params) {
      base.push_back("--param");
      base.push_back(k + "=" + v);
    }
    struct Placed {
      std::optional<int> cpu, partner;
    };
    const std::vector<Placed> placements =
        spec.two_party ? std::vector<Placed>{{a, a}, {a, b}, {std::nullopt, std::nullopt}}
                       : std::vector<Placed>{{std::nullopt, std::nullopt}};
    for (const auto& pl : placements) {
      std::vector<std::string> args = base;
      if (pl.cpu) {
        args.push_back("--cpu");
        args.push_back(std::to_string(*pl.cpu));
      }
      if (pl.partner) {
        args.push_back("--partner-cpu");
        args.push_back(std::to_string(*pl.partner));
      }
      const std::string placement = placement_name(spec.two_party, pl.cpu, pl.partner);
      JsonObject o;
      o.add("bench", bench)
          .add("variant", spec.variant)
          .add("params", canonical_params(spec.params))
          .add("placement", placement)
          .add("case", case_name(bench, spec.variant, spec.params, spec.two_party, placement))
          .add("metric", metric_name(spec.metric))
          .add("two_party", spec.two_party)
          .add("control", spec.control)
          .add("args", args);
      out.push_back(o.str());
    }
  }
  return out;
}

}  // namespace kbench
