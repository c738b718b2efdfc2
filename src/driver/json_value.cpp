// json_value.cpp — the driver's JSON reader and writer (see json_value.hpp).
//
// A recursive-descent parser over RFC 8259 JSON. Depth is limited so that a
// hostile or broken line cannot exhaust the stack; strings are decoded to
// UTF-8 (surrogate pairs included) and re-quoted on output, so whatever we
// read can be written back out valid. Strings are quoted by the harness's
// json_quote, the same code that writes every sample.
#include "driver/json_value.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>


namespace kbench::driver {

JsonValue JsonValue::boolean(bool b) {
  JsonValue v;
  v.kind_ = Kind::boolean;
  v.bool_ = b;
  return v;
}

JsonValue JsonValue::integer(std::int64_t i) { return number_text(std::to_string(i)); }

JsonValue JsonValue::unsigned_integer(std::uint64_t u) { return number_text(std::to_string(u)); }

JsonValue JsonValue::real(double d) {
  if (!std::isfinite(d)) return JsonValue();
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", d);
  return number_text(buf);
}

JsonValue JsonValue::string(std::string s) {
  JsonValue v;
  v.kind_ = Kind::string;
  v.text_ = std::move(s);
  return v;
}

JsonValue JsonValue::array() {
  JsonValue v;
  v.kind_ = Kind::array;
  return v;
}

JsonValue JsonValue::object() {
  JsonValue v;
  v.kind_ = Kind::object;
  return v;
}

JsonValue JsonValue::number_text(std::string text) {
  JsonValue v;
  v.kind_ = Kind::number;
  v.text_ = std::move(text);
  return v;
}

JsonValue JsonValue::string_or_null(const std::optional<std::string>& s) {
  return s ? string(*s) : JsonValue();
}

std::optional<std::int64_t> JsonValue::as_int() const {
  if (kind_ != Kind::number) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text_.c_str(), &end, 10);
  if (errno != 0 || end == text_.c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::optional<std::uint64_t> JsonValue::as_uint() const {
  if (kind_ != Kind::number || text_.empty() || text_[0] == '-') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text_.c_str(), &end, 10);
  if (errno != 0 || end == text_.c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::optional<double> JsonValue::as_double() const {
  if (kind_ != Kind::number) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text_.c_str(), &end);
  if (end == text_.c_str() || *end != '\0') return std::nullopt;
  return v;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  if (kind_ != Kind::object) return nullptr;
  for (const auto& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

JsonValue* JsonValue::find(std::string_view key) {
  if (kind_ != Kind::object) return nullptr;
  for (auto& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

std::optional<std::string> JsonValue::get_string(std::string_view key) const {
  const JsonValue* v = find(key);
  if (!v || !v->is_string()) return std::nullopt;
  return v->text();
}

JsonValue& JsonValue::set(std::string key, JsonValue v) {
  kind_ = Kind::object;
  for (auto& m : members_) {
    if (m.first == key) {
      m.second = std::move(v);
      return m.second;
    }
  }
  members_.emplace_back(std::move(key), std::move(v));
  return members_.back().second;
}

JsonValue& JsonValue::push(JsonValue v) {
  kind_ = Kind::array;
  items_.push_back(std::move(v));
  return items_.back();
}

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  std::optional<JsonValue> parse_document(std::string* error) {
    JsonValue v;
    skip_ws();
    if (parse_value(v, 0)) {
      skip_ws();
      if (pos_ == s_.size()) return v;
      fail("trailing characters");
    }
    if (error) *error = error_ + " at offset " + std::to_string(pos_);
    return std::nullopt;
  }

 private:
  bool fail(const char* what) {
    if (error_.empty()) error_ = what;
    return false;
  }

  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool parse_value(JsonValue& out, int depth) {
    if (depth > kMaxDepth) return fail("nesting too deep");
    if (pos_ >= s_.size()) return fail("unexpected end");
    switch (s_[pos_]) {
      case '{': return parse_object(out, depth);
      case '[': return parse_array(out, depth);
      case '"': {
        std::string str;
        if (!parse_string(str)) return false;
        out = JsonValue::string(std::move(str));
        return true;
      }
      case 't': out = JsonValue::boolean(true); return literal("true");
      case 'f': out = JsonValue::boolean(false); return literal("false");
      case 'n': out = JsonValue(); return literal("null");
      default: return parse_number(out);
    }
  }

  bool parse_object(JsonValue& out, int depth) {
    out = JsonValue::object();
    ++pos_;  // '{'
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') return fail("expected a key");
      std::string key;
      if (!parse_string(key)) return false;
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') return fail("expected ':'");
      ++pos_;
      skip_ws();
      JsonValue v;
      if (!parse_value(v, depth + 1)) return false;
      out.set(std::move(key), std::move(v));  // a repeated key keeps the last value
      skip_ws();
      if (pos_ >= s_.size()) return fail("unexpected end");
      if (s_[pos_] == ',') { ++pos_; continue; }
      if (s_[pos_] == '}') { ++pos_; return true; }
      return fail("expected ',' or '}'");
    }
  }

  bool parse_array(JsonValue& out, int depth) {
    out = JsonValue::array();
    ++pos_;  // '['
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_ws();
      JsonValue v;
      if (!parse_value(v, depth + 1)) return false;
      out.push(std::move(v));
      skip_ws();
      if (pos_ >= s_.size()) return fail("unexpected end");
      if (s_[pos_] == ',') { ++pos_; continue; }
      if (s_[pos_] == ']') { ++pos_; return true; }
      return fail("expected ',' or ']'");
    }
  }

  bool parse_number(JsonValue& out) {
    const std::size_t start = pos_;
    auto digits = [&] {
      const std::size_t d = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > d;
    };
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return fail("invalid value");
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits()) return fail("invalid number");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return fail("invalid number");
    }
    out = JsonValue::number_text(std::string(s_.substr(start, pos_ - start)));
    return true;
  }

  bool hex4(unsigned& cp) {
    if (pos_ + 4 > s_.size()) return fail("short \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      cp <<= 4;
      if (c >= '0' && c <= '9') cp |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') cp |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') cp |= unsigned(c - 'A' + 10);
      else return fail("bad \\u escape");
    }
    return true;
  }

  static void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  bool parse_string(std::string& out) {
    ++pos_;  // opening quote
    for (;;) {
      if (pos_ >= s_.size()) return fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) return fail("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (pos_ + 2 <= s_.size() && s_[pos_] == '\\' && s_[pos_ + 1] == 'u') {
              pos_ += 2;
              if (!hex4(lo)) return false;
              if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              } else {
                put_utf8(out, 0xFFFD);
                cp = lo;
              }
            } else {
              cp = 0xFFFD;  // lone surrogate: keep the text valid UTF-8
            }
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            cp = 0xFFFD;
          }
          put_utf8(out, cp);
          break;
        }
        default: return fail("bad escape");
      }
    }
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::string error_;
};

void dump_into(std::string& out, const JsonValue& v, bool pretty, int indent) {
  auto newline = [&](int level) {
    if (!pretty) return;
    out += '\n';
    out.append(static_cast<std::size_t>(level) * 2, ' ');
  };
  switch (v.kind()) {
    case JsonValue::Kind::null: out += "null"; return;
    case JsonValue::Kind::boolean: out += v.as_bool() ? "true" : "false"; return;
    case JsonValue::Kind::number: out += v.text(); return;
    case JsonValue::Kind::string: out += json_quote(v.text()); return;
    case JsonValue::Kind::array: {
      if (v.items().empty()) {
        out += "[]";
        return;
      }
      // Arrays of scalars stay on one line: load averages, args, CPU lists.
      bool scalars = true;
      for (const auto& item : v.items())
        if (item.is_array() || item.is_object()) scalars = false;
      out += '[';
      bool first = true;
      for (const auto& item : v.items()) {
        if (!first) out += pretty && scalars ? ", " : ",";
        first = false;
        if (!scalars) newline(indent + 1);
        dump_into(out, item, pretty, indent + 1);
      }
      if (!scalars) newline(indent);
      out += ']';
      return;
    }
    case JsonValue::Kind::object: {
      if (v.members().empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& m : v.members()) {
        if (!first) out += ',';
        first = false;
        newline(indent + 1);
        out += json_quote(m.first);
        out += pretty ? ": " : ":";
        dump_into(out, m.second, pretty, indent + 1);
      }
      newline(indent);
      out += '}';
      return;
    }
  }
}

}  // namespace

std::optional<JsonValue> json_parse(std::string_view text, std::string* error) {
  return Parser(text).parse_document(error);
}

std::string json_dump(const JsonValue& v, bool pretty) {
  std::string out;
  dump_into(out, v, pretty, 0);
  return out;
}

}  // namespace kbench::driver
