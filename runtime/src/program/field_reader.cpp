#include "program/field_reader.h"

namespace pipesched::runtime::loading {
namespace {

// A value for a message, at most ~40 characters: containers are written
// element by element until the budget is spent, so a huge value costs
// nothing (nesting is bounded by the parser, kMaxJsonDepth).
void preview(const json &v, std::string &out, size_t budget) {
  if (out.size() > budget)
    return;
  if (v.is_array() || v.is_object()) {
    out += v.is_array() ? "[" : "{";
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() <= budget; ++it) {
      out += first ? "" : ",";
      first = false;
      if (v.is_object())
        out += json(it.key()).dump() + ":";
      preview(it.value(), out, budget);
    }
    out += v.is_array() ? "]" : "}";
    return;
  }
  if (v.is_string() && v.get_ref<const std::string &>().size() > budget) {
    out += json(v.get_ref<const std::string &>().substr(0, budget)).dump();
    return;
  }
  out += v.dump();
}

} // namespace

std::string shortDump(const json &v) {
  std::string s;
  preview(v, s, 40);
  if (s.size() > 40)
    s = s.substr(0, 37) + "...";
  return s;
}

std::string describeValue(const json &v) {
  return std::string(v.type_name()) + " " + shortDump(v);
}

} // namespace pipesched::runtime::loading
