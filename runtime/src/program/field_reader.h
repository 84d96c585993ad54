// The checks the loader makes of every JSON value it reads: presence, type,
// integer range, unknown fields. Each failure is a ProgramError naming the
// file and the place in it ("program.json: ranks[1].ops[7].peer: 5 is out
// of range [0, 4)") with at most ~40 characters of the value.
#pragma once

#include "program/json_path.h"
#include "program/program_error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

namespace pipesched::runtime::loading {

using json = nlohmann::json;

inline constexpr int64_t kNoUpperBound = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();

// A value for a message, at most 40 characters: a huge value costs nothing.
std::string shortDump(const json &v);
// Its type, then shortDump: "string \"x\"".
std::string describeValue(const json &v);

class FieldReader {
public:
  explicit FieldReader(std::string source) : source_(std::move(source)) {}

protected:
  [[noreturn]] void fail(const JsonPath &where, const std::string &what) const {
    throw ProgramError(source_ + ": " + (where.empty() ? "" : where.str() + ": ") + what);
  }

  static std::string str(std::string_view s) { return std::string(s); }

  const json &require(const json &obj, std::string_view key,
                      const JsonPath &where) const {
    auto it = obj.find(str(key));
    if (it == obj.end())
      fail(where, "missing field '" + str(key) + "'");
    return *it;
  }

  void checkObject(const json &v, const JsonPath &where) const {
    if (!v.is_object())
      fail(where, "expected an object, got " + describeValue(v));
  }
  void checkArray(const json &v, const JsonPath &where) const {
    if (!v.is_array())
      fail(where, "expected an array, got " + describeValue(v));
  }

  // Refuses fields not in `allowed`; `context` ends the message.
  template <size_t N>
  void checkFields(const json &obj, const JsonPath &where,
                   const std::string_view (&allowed)[N], const char *context = "") const {
    for (auto it = obj.begin(); it != obj.end(); ++it)
      if (std::find(std::begin(allowed), std::end(allowed), it.key()) == std::end(allowed))
        fail(where, "unknown field '" + it.key() + "'" + context);
  }

  // An integer in [lo, hi).
  int64_t toInt(const json &v, const JsonPath &where, int64_t lo, int64_t hi) const {
    if (!v.is_number_integer())
      fail(where, "expected an integer, got " + describeValue(v));
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(where, shortDump(v) + " is too large");
    int64_t x = v.get<int64_t>();
    if (hi == kNoUpperBound) {
      if (x < lo)
        fail(where, std::to_string(x) + " must be at least " + std::to_string(lo));
    } else if (x < lo || x >= hi) {
      fail(where, std::to_string(x) + " is out of range [" + std::to_string(lo) +
                      ", " + std::to_string(hi) + ")");
    }
    return x;
  }

  int64_t intField(const json &obj, std::string_view key, const JsonPath &where,
                   int64_t lo, int64_t hi) const {
    return toInt(require(obj, key, where), where.key(key), lo, hi);
  }

  double toNumber(const json &v, const JsonPath &where) const {
    if (!v.is_number())
      fail(where, "expected a number, got " + describeValue(v));
    double x = v.get<double>();
    if (!(x >= 0))
      fail(where, shortDump(v) + " must be non-negative");
    return x;
  }

  std::string source_; // the file being read: prefixed to every message
};

} // namespace pipesched::runtime::loading
