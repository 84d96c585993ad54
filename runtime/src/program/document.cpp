#include "program/document.h"

#include "pipesched/Support/JsonScan.h"
#include "program/program_error.h"

#include <zlib.h>

#include <cstdio>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace pipesched::runtime {
namespace {

using json = nlohmann::json;

bool isJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Where the document first nests deeper than kMaxJsonDepth ("" if it
// does not). One pass over the characters (JsonScan.h): much cheaper than
// nlohmann's parser callback (which made parsing a 10^6-op program seven
// times slower), and it names the place.
std::string tooDeep(const std::string &text) {
  const size_t at = json_scan::firstTooDeep(text, unsigned(kMaxJsonDepth));
  if (at == std::string_view::npos)
    return "";
  // No newline before: rfind's npos + 1 wraps to 0, the first line's start.
  const size_t lineStart = at == 0 ? 0 : text.rfind('\n', at - 1) + 1;
  const size_t line = size_t(std::count(text.begin(), text.begin() + at, '\n')) + 1;
  return "at line " + std::to_string(line) + ", column " +
         std::to_string(at - lineStart + 1) + " (byte " + std::to_string(at + 1) + ")";
}

json decodeJson(const std::string &text, const std::string &source) {
  // Nesting is bounded before parsing: nothing recurses over a deep
  // document (nlohmann's parser does not, but dumping a value for a message
  // would), and a valid program nests 8 levels at most.
  std::string deep = tooDeep(text);
  if (!deep.empty())
    throw ProgramError(source + ": JSON nested deeper than " +
                       std::to_string(kMaxJsonDepth) + " levels " + deep +
                       " (a program nests at most 8)");
  try {
    return json::parse(text);
  } catch (const json::parse_error &e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3,
    // column 5: ..."; keep the part after the prefix and add the byte offset.
    std::string what = e.what();
    const std::string marker = "parse error ";
    size_t at = what.find(marker);
    if (at != std::string::npos)
      what = what.substr(at + marker.size());
    throw ProgramError(source + ": invalid JSON " + what + " (byte " +
                       std::to_string(e.byte) + ")");
  } catch (const json::out_of_range &e) {
    // A number beyond double's range (fuzz finding: "act_bytes":4e758).
    // e.what() is "[json.exception.out_of_range.406] number overflow
    // parsing '4e758'": nlohmann gives no offset, the number names it.
    std::string what = e.what();
    size_t at = what.find("] ");
    if (at != std::string::npos)
      what = what.substr(at + 2);
    throw ProgramError(source + ": invalid JSON: " + what +
                       " (beyond the range of a double)");
  }
}

// Reads a CBOR document into the DOM that JSON would give, in one pass
// without recursion, refusing what would cost stack or memory or what JSON
// cannot say: nesting beyond kMaxJsonDepth, containers claiming more
// elements than bytes remain, byte strings, tags, simple values but false,
// true and null, non-finite floats, non-text map keys, text that is not
// UTF-8, integers below -2^63, truncation and trailing bytes. Each refusal
// names its byte. Not nlohmann's from_cbor: it recurses, and on a program
// of 10^6 jobs it took 3.5 times the time and 1.8 times the memory of
// parsing the same program's JSON (docs/program-format.md, "Big programs").
class CborReader {
public:
  CborReader(const std::string &bytes, const std::string &source)
      : b_(bytes), source_(source) {}

  json read() {
    do {
      if (at_ >= b_.size())
        fail(at_, open_.empty() ? "the file ends before its document"
                                : "truncated: the file ends inside the " +
                                      kindOf(open_.back()) + " opened at byte " +
                                      std::to_string(open_.back().start + 1));
      item();
    } while (!open_.empty());
    if (at_ != b_.size())
      fail(at_, std::to_string(b_.size() - at_) + " bytes after the document");
    return std::move(root_);
  }

private:
  struct Open {
    bool map, indefinite;
    uint64_t left; // items still to come (definite; a map's are 2 per entry)
    uint64_t seen; // items read: in a map, even before a key
    size_t start;
    json *value; // in the DOM: stable while open (its parent does not grow)
  };

  // Places a value in the open container (under the pending key in a map;
  // a repeated key keeps the last value, as JSON's parser does), or as the
  // document; returns where it is.
  json *put(json &&v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json &parent = *open_.back().value;
    if (open_.back().map) {
      json &slot = parent[key_];
      slot = std::move(v);
      return &slot;
    }
    parent.push_back(std::move(v));
    return &parent.back();
  }

  [[noreturn]] void fail(size_t at, const std::string &what) const {
    throw ProgramError(source_ + ": invalid CBOR: " + what + " (byte " +
                       std::to_string(at + 1) + ")");
  }
  static std::string kindOf(const Open &o) { return o.map ? "map" : "array"; }
  size_t remaining() const { return b_.size() - at_; }
  unsigned char byteAt(size_t i) const { return static_cast<unsigned char>(b_[i]); }

  // The argument of the head at `head` (its additional information
  // `info` < 28); moves at_ past the head.
  uint64_t argument(size_t head, unsigned info) {
    size_t n = info < 24 ? 0 : size_t(1) << (info - 24);
    if (remaining() < 1 + n)
      fail(head, "truncated: the head needs " + std::to_string(n) + " more bytes, " +
                     std::to_string(remaining() - 1) + " remain");
    uint64_t v = info < 24 ? info : 0;
    for (size_t k = 1; k <= n; ++k)
      v = v << 8 | byteAt(head + k);
    at_ = head + 1 + n;
    return v;
  }

  void item() {
    const size_t head = at_;
    const unsigned major = byteAt(head) >> 5, info = byteAt(head) & 31u;
    if (byteAt(head) == 0xff) { // a break ends an indefinite container
      if (open_.empty() || !open_.back().indefinite ||
          (open_.back().map && open_.back().seen % 2))
        fail(head, "an unexpected break (0xff)");
      at_ = head + 1;
      open_.pop_back();
      closeFinished();
      return;
    }
    key_.clear();
    const bool key = !open_.empty() && open_.back().map && open_.back().seen % 2 == 0;
    if (key)
      pendingKey_.clear();
    else if (!open_.empty() && open_.back().map)
      key_.swap(pendingKey_);
    if (!open_.empty()) {
      ++open_.back().seen;
      if (!open_.back().indefinite)
        --open_.back().left;
    }
    if (key && major != 3)
      fail(head, "a map key that is not a text string (major type " +
                     std::to_string(major) + ")");
    if (info >= 28 && info <= 30)
      fail(head, "reserved additional information " + std::to_string(info));
    if (info == 31 && (major <= 1 || major == 6))
      fail(head, "an indefinite length on major type " + std::to_string(major));
    switch (major) {
    case 0:
      put(json(argument(head, info)));
      break;
    case 1: {
      const uint64_t n = argument(head, info);
      if (n > uint64_t(std::numeric_limits<int64_t>::max()))
        fail(head, "a negative integer below -2^63");
      put(json(-1 - int64_t(n)));
      break;
    }
    case 2:
      fail(head, "a byte string (a program holds none)");
    case 3:
      text(head, info, key ? pendingKey_ : text_);
      if (!key)
        put(json(std::move(text_)));
      text_.clear();
      break;
    case 4:
    case 5:
      container(head, major == 5, info);
      break;
    case 6:
      fail(head, "a tag (a program uses none)");
    default:
      simple(head, info);
      break;
    }
    closeFinished();
  }

  void container(size_t head, bool map, unsigned info) {
    if (open_.size() >= size_t(kMaxJsonDepth))
      fail(head, "nested deeper than " + std::to_string(kMaxJsonDepth) +
                     " levels (a program nests at most 8)");
    json *value = put(map ? json::object() : json::array());
    if (info == 31) {
      at_ = head + 1;
      open_.push_back(Open{map, true, 0, 0, head, value});
      return;
    }
    uint64_t n = argument(head, info);
    // Each element takes a byte at least: a larger count is a lie (or a
    // truncation), refused before anything is sized by it.
    if (n > remaining() || (map && 2 * n > remaining()))
      fail(head, std::string(map ? "truncated: a map of " : "truncated: an array of ") +
                     std::to_string(n) + (map ? " entries" : " elements") + ", only " +
                     std::to_string(remaining()) + " bytes remain");
    open_.push_back(Open{map, false, map ? 2 * n : n, 0, head, value});
  }

  void text(size_t head, unsigned info, std::string &out) {
    if (info != 31) {
      chunk(head, info, out);
      return;
    }
    at_ = head + 1; // chunks of definite text until a break
    for (;;) {
      if (at_ >= b_.size())
        fail(head, "truncated: the file ends inside the text string");
      if (byteAt(at_) == 0xff) {
        ++at_;
        return;
      }
      if (byteAt(at_) >> 5 != 3 || (byteAt(at_) & 31u) >= 28)
        fail(at_, "a chunk of an indefinite text string that is not definite text");
      chunk(at_, byteAt(at_) & 31u, out);
    }
  }

  void chunk(size_t head, unsigned info, std::string &out) {
    uint64_t n = argument(head, info);
    if (n > remaining())
      fail(head, "truncated: a text string of " + std::to_string(n) + " bytes, " +
                     std::to_string(remaining()) + " remain");
    if (!utf8(at_, size_t(n)))
      fail(head, "a text string that is not UTF-8");
    out.append(b_, at_, size_t(n));
    at_ += size_t(n);
  }

  // Well-formed UTF-8 (Unicode, table 3-7): what nlohmann's dump accepts.
  bool utf8(size_t from, size_t n) const {
    for (size_t i = from, end = from + n; i < end;) {
      unsigned c = byteAt(i);
      if (c < 0x80) {
        ++i;
        continue;
      }
      size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                                           : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
      if (len == 0 || end - i < len)
        return false;
      unsigned lo = 0x80, hi = 0xbf, c1 = byteAt(i + 1);
      if (c == 0xe0)
        lo = 0xa0;
      else if (c == 0xed)
        hi = 0x9f;
      else if (c == 0xf0)
        lo = 0x90;
      else if (c == 0xf4)
        hi = 0x8f;
      if (c1 < lo || c1 > hi)
        return false;
      for (size_t k = 2; k < len; ++k)
        if ((byteAt(i + k) & 0xc0) != 0x80)
          return false;
      i += len;
    }
    return true;
  }

  void simple(size_t head, unsigned info) {
    if (info >= 20 && info <= 22) { // false, true, null
      at_ = head + 1;
      put(info == 22 ? json(nullptr) : json(info == 21));
      return;
    }
    if (info < 25 || info > 27)
      fail(head, "the simple value " + std::to_string(info == 24 && remaining() > 1
                                                          ? byteAt(head + 1)
                                                          : info) +
                     " (a program uses false, true and null only)");
    uint64_t bits = argument(head, info);
    const bool finite = info == 25   ? (bits >> 10 & 0x1f) != 0x1f
                        : info == 26 ? (bits >> 23 & 0xff) != 0xff
                                     : (bits >> 52 & 0x7ff) != 0x7ff;
    if (!finite)
      fail(head, "a float that is not finite (JSON has no infinity or NaN)");
    put(json(info == 25 ? halfFloat(uint16_t(bits))
             : info == 26 ? double(floatOf(uint32_t(bits)))
                          : doubleOf(bits)));
  }

  static float floatOf(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  static double doubleOf(uint64_t bits) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  // RFC 8949, appendix D (finite values only reach here).
  static double halfFloat(uint16_t h) {
    const int exponent = h >> 10 & 0x1f, mantissa = h & 0x3ff;
    const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24)
                                           : std::ldexp(mantissa + 1024, exponent - 25);
    return h & 0x8000 ? -magnitude : magnitude;
  }

  // Pops the definite containers whose last item was just read.
  void closeFinished() {
    while (!open_.empty() && !open_.back().indefinite && open_.back().left == 0)
      open_.pop_back();
  }

  const std::string &b_;
  const std::string &source_;
  size_t at_ = 0;
  std::vector<Open> open_;
  json root_;
  // The key of the value being read (pendingKey_ until its value starts),
  // and the text being read.
  std::string key_, pendingKey_, text_;
};

json decodeCbor(const std::string &bytes, const std::string &source) {
  return CborReader(bytes, source).read();
}

} // namespace

program::Encoding encodingOf(const std::string &bytes, const std::string &source) {
  // An empty file (one truncated to nothing, or not written yet) would be
  // "invalid JSON at line 1, column 1 ... (byte 1)": say what it is.
  if (bytes.empty())
    throw ProgramError(source + ": the file is empty (0 bytes), not a program");
  const char first = bytes[0];
  if (first == '{' || isJsonSpace(first)) {
    if (bytes.find_first_not_of(" \t\r\n") == std::string::npos)
      throw ProgramError(source + ": the file holds only whitespace, not a program");
    return program::Encoding::Json;
  }
  if (program::isCborMapHead(static_cast<unsigned char>(first)))
    return program::Encoding::Cbor;
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", unsigned(static_cast<unsigned char>(first)));
  throw ProgramError(source + ": neither JSON nor CBOR: first byte " + hex +
                     " (a program is a JSON object, '{', or a CBOR map, 0xa0-0xbb or 0xbf)");
}

json decodeDocument(const std::string &bytes, const std::string &source) {
  return encodingOf(bytes, source) == program::Encoding::Json ? decodeJson(bytes, source)
                                                              : decodeCbor(bytes, source);
}

uint32_t crc32Of(const std::string &bytes) {
  // zlib takes uInt lengths: feed it in slices.
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto *data = reinterpret_cast<const Bytef *>(bytes.data());
  for (size_t done = 0; done < bytes.size();) {
    uInt n = uInt(std::min<size_t>(bytes.size() - done, size_t(1) << 30));
    crc = crc32(crc, data + done, n);
    done += n;
  }
  return uint32_t(crc);
}

std::string hex32(uint32_t value) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%08x", value);
  return s;
}

} // namespace pipesched::runtime
