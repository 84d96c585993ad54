// A place in a JSON document ("ranks[1].ops[7].peer"), kept as parts and
// rendered only when a message needs it: loading a valid program of 10^6
// ops builds no strings per op.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pipesched::runtime {

class JsonPath {
public:
  // The keys must outlive the path (the schema's names, or the document's).
  JsonPath key(std::string_view k) const {
    JsonPath p = *this;
    p.push(Part{k, -1});
    return p;
  }
  JsonPath index(int64_t i) const {
    JsonPath p = *this;
    p.push(Part{{}, i});
    return p;
  }
  bool empty() const { return size_ == 0; }

  std::string str() const {
    std::string s;
    for (int i = 0; i < size_; ++i) {
      const Part &part = parts_[i];
      if (part.index >= 0)
        s += "[" + std::to_string(part.index) + "]";
      else
        s += (s.empty() ? "" : ".") + std::string(part.key);
    }
    return s;
  }

private:
  struct Part {
    std::string_view key;
    int64_t index = -1;
  };
  // Deep enough for ranks[i].ops[j].ops[k].reads[m]; deeper paths never
  // occur (the loader does not descend further).
  static constexpr int kMaxParts = 10;
  void push(Part part) {
    if (size_ < kMaxParts)
      parts_[size_++] = part;
  }
  Part parts_[kMaxParts];
  int size_ = 0;
};

} // namespace pipesched::runtime
