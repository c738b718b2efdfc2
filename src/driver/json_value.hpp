// json_value.hpp — a small JSON value type with a reader and a writer.
//
// The driver has to read JSON as well as write it: the `--list` lines of the
// binaries, their sample lines (to check them and to build the end table),
// and its own runs.jsonl and meta.json when resuming. The harness only
// writes JSON, so the reading side lives here. Numbers keep their source
// text so that 64-bit integers (seeds, nanoseconds) survive a round trip
// exactly; objects keep their key order so that rewritten files stay
// readable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/internal/json.hpp"  // json_quote: one quoting for samples and driver records

namespace kbench::driver {

class JsonValue {
 public:
  enum class Kind { null, boolean, number, string, array, object };
  using Member = std::pair<std::string, JsonValue>;

  JsonValue() = default;  // null
  static JsonValue boolean(bool b);
  static JsonValue integer(std::int64_t v);
  static JsonValue unsigned_integer(std::uint64_t v);
  static JsonValue real(double v);  // non-finite becomes null
  static JsonValue string(std::string s);
  static JsonValue array();
  static JsonValue object();
  // `text` must be a valid JSON number.
  static JsonValue number_text(std::string text);
  // Convenience: a string, or null when absent.
  static JsonValue string_or_null(const std::optional<std::string>& s);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::null; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_number() const { return kind_ == Kind::number; }
  bool is_array() const { return kind_ == Kind::array; }
  bool is_object() const { return kind_ == Kind::object; }
  bool as_bool() const { return kind_ == Kind::boolean && bool_; }

  // String contents, or the source text of a number; empty otherwise.
  const std::string& text() const { return text_; }
  std::optional<std::int64_t> as_int() const;
  std::optional<std::uint64_t> as_uint() const;
  std::optional<double> as_double() const;

  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<Member>& members() const { return members_; }
  // nullptr when this is not an object or has no such key.
  const JsonValue* find(std::string_view key) const;
  JsonValue* find(std::string_view key);
  // The string value of `key`, if it is a string.
  std::optional<std::string> get_string(std::string_view key) const;

  // Replaces the value of an existing key in place, else appends it.
  JsonValue& set(std::string key, JsonValue v);
  JsonValue& push(JsonValue v);

 private:
  Kind kind_ = Kind::null;
  bool bool_ = false;
  std::string text_;
  std::vector<JsonValue> items_;
  std::vector<Member> members_;
};

// Parses one complete JSON text (surrounding whitespace allowed). On failure
// returns nullopt and, if `error` is given, a short description.
std::optional<JsonValue> json_parse(std::string_view text, std::string* error = nullptr);

// Compact single-line JSON, or indented by two spaces when `pretty`.
std::string json_dump(const JsonValue& v, bool pretty = false);

}  // namespace kbench::driver
