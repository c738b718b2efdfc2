// cases.cpp — case construction helpers, names and --list output.
#include "harness/internal/cases.hpp"

#include <set>

#include "harness/internal/json.hpp"

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

CaseSpec loop(std::string variant, std::function<void(std::uint64_t)> fn) {
  return fixture<LambdaFixture>(std::move(variant), std::move(fn));
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

std::vector<CaseSpec> sweep(const std::vector<CaseSpec>& bases, const std::string& key,
                            const std::vector<std::string>& values) {
  std::vector<CaseSpec> out;
  for (const auto& b : bases) {
    auto s = sweep(b, key, values);
    out.insert(out.end(), s.begin(), s.end());
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

namespace {

// The column of a case: the first declared one whose at() matches.
const Column* column_of(const CaseSpec& spec) {
  for (const auto& c : spec.columns) {
    bool match = true;
    for (const auto& [k, v] : c.fields().where) {
      const auto it = spec.params.find(k);
      match = match && it != spec.params.end() && it->second == v;
    }
    if (match) return &c;
  }
  return nullptr;
}

std::string summary_json(const Column* col, bool two_party) {
  if (!col) return "null";
  const Column::Fields& f = col->fields();
  auto text_or_null = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional<std::string>(s); };
  JsonObject o;
  o.add("column", f.label)
      .add("note", f.note)
      .add("order", f.order)
      .add("combine", f.combine)
      .add("placement", two_party ? std::optional<std::string>("same") : std::nullopt)
      .add("minus", text_or_null(f.minus))
      .add("size_param", text_or_null(f.size_param))
      .add("prefer", f.prefer)
      .add("per", text_or_null(f.per));
  return o.str();
}

std::string curve_json(const std::optional<Curve>& curve) {
  if (!curve) return "null";
  const Curve::Fields& f = curve->fields();
  JsonObject o;
  o.add("chart", f.chart)
      .add("title", f.title)
      .add("panel", f.panel)
      .add("x", f.x)
      .add("log_y", f.log_y)
      .add("cache_lines", f.cache_lines);
  return o.str();
}

}  // namespace

std::vector<std::string> list_lines(const std::string& bench, const std::optional<Category>& category,
                                    const std::vector<CaseSpec>& specs, const std::vector<int>& cpus) {
  std::vector<std::string> out;
  const int a = cpus.empty() ? 0 : cpus[0];
  const int b = cpus.size() > 1 ? cpus[1] : a + 1;
  std::set<std::string> declared, used;  // column labels
  for (std::size_t index = 0; index < specs.size(); ++index) {
    const CaseSpec& spec = specs[index];
    const Category cat = spec.own_category ? *spec.own_category : category.value_or(Category{"Other", 1000, 999});
    const int bench_rank = cat.bench ? *cat.bench : (category && category->bench ? *category->bench : 999);
    const bool bw = spec.metric == Metric::bandwidth;
    const Column* col = column_of(spec);
    for (const auto& c : spec.columns) declared.insert(c.fields().label);
    if (col) used.insert(col->fields().label);
    const std::string summary = summary_json(col, spec.is_two_party), curve = curve_json(spec.plot);
    std::vector<std::string> base{spec.variant};
    for (const auto& [k, v] : spec.params) {
      base.push_back("--param");
      base.push_back(k + "=" + v);
    }
    struct Placed {
      std::optional<int> cpu, partner;
    };
    const std::vector<Placed> placements =
        spec.is_two_party ? std::vector<Placed>{{a, a}, {a, b}, {std::nullopt, std::nullopt}}
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
      const std::string placement = placement_name(spec.is_two_party, pl.cpu, pl.partner);
      JsonObject o;
      o.add("bench", bench)
          .add("variant", spec.variant)
          .add("params", canonical_params(spec.params))
          .add("placement", placement)
          .add("case", case_name(bench, spec.variant, spec.params, spec.is_two_party, placement))
          .add("metric", metric_name(spec.metric))
          .add("two_party", spec.is_two_party)
          .add("control", spec.is_control)
          .add("domain", spec.domain)
          .add("args", args)
          .add("category", cat.name)
          .add("category_rank", cat.rank)
          .add("rank", bench_rank * 1000 + static_cast<int>(index))
          .add("direction", bw ? "higher" : "lower")
          .add("unit", bw ? "MB/s" : "ns")
          .add_raw("summary", summary)
          .add_raw("curve", curve);
      out.push_back(o.str());
    }
  }
  for (const auto& label : declared)
    if (!used.count(label)) die("internal error: summary column '" + label + "' matches none of the cases");
  return out;
}

}  // namespace kbench
