//===- TraceEvents.h - Chrome trace-event JSON, shared ----------*- C++ -*-===//
//
// The one writer of the trace format Perfetto and chrome://tracing open
// (the "JSON Array/Object Format" of the Trace Event Format): the compiler's
// `--sched-to-trace` writes the simulated timeline with it and the runtime's
// `pipeline-run --trace` the measured one, so that both open side by side
// with the same tracks. Plain C++17, header-only (the runtime has no MLIR).
//
// Layout: a process per rank ("rank r"), two threads in it: compute (tid 0:
// forward, backward, backward_weight and scan jobs) and communication (tid
// 1: sends, receives, weight fetches, reductions, optimizer steps). Every
// event is a complete event ("ph": "X") with `ts` and `dur` in
// microseconds and integer `args` (stage, microbatch, bytes, ...). One event
// per line, so that the file diffs and greps.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_PROGRAM_TRACEEVENTS_H
#define PIPESCHED_PROGRAM_TRACEEVENTS_H

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

namespace pipesched::trace {

enum Track : int { kCompute = 0, kCommunication = 1 };
inline constexpr std::string_view kTrackNames[] = {"compute", "communication"};

/// An integer argument of an event; `value < 0` is left out (an op with no
/// microbatch, say).
struct Arg {
  std::string_view key;
  int64_t value;
};

class TraceWriter {
public:
  /// Appends to `out`; `source` ("simulated" or "measured") and `unit` (how
  /// the times were made: "ns", or "tick" with one tick written as one
  /// microsecond) go to the trace's metadata.
  TraceWriter(std::string &out, std::string_view source, std::string_view unit)
      : out_(out) {
    out_ += "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"source\": ";
    quoted(source);
    out_ += ", \"time_unit\": ";
    quoted(unit);
    out_ += "},\n\"traceEvents\": [";
  }

  /// The names of rank `r`'s process and its two tracks.
  void rank(int r) {
    std::string name = "rank " + std::to_string(r);
    metadata(r, kCompute, "process_name", name);
    metadata(r, kCompute, "process_sort_index", r);
    for (int t : {kCompute, kCommunication}) {
      metadata(r, t, "thread_name", kTrackNames[t]);
      metadata(r, t, "thread_sort_index", t);
    }
  }

  /// A slice of `durationUs` from `startUs` on rank `r`'s track.
  void slice(int r, Track track, std::string_view name, std::string_view category,
             double startUs, double durationUs, std::initializer_list<Arg> args) {
    begin();
    out_ += "{\"name\": ";
    quoted(name);
    out_ += ", \"cat\": ";
    quoted(category);
    out_ += ", \"ph\": \"X\", \"pid\": " + std::to_string(r) +
            ", \"tid\": " + std::to_string(int(track)) + ", \"ts\": ";
    number(startUs);
    out_ += ", \"dur\": ";
    number(durationUs);
    out_ += ", \"args\": {";
    bool first = true;
    for (const Arg &a : args) {
      if (a.value < 0)
        continue;
      if (!first)
        out_ += ", ";
      first = false;
      quoted(a.key);
      out_ += ": " + std::to_string(a.value);
    }
    out_ += "}}";
  }

  /// Closes the document.
  void finish() { out_ += "\n]}\n"; }

private:
  void begin() {
    out_ += events_++ ? ",\n" : "\n";
  }
  template <typename Value>
  void metadata(int r, int tid, std::string_view what, const Value &value) {
    begin();
    out_ += "{\"name\": ";
    quoted(what);
    out_ += ", \"ph\": \"M\", \"pid\": " + std::to_string(r) +
            ", \"tid\": " + std::to_string(tid) + ", \"args\": {";
    if constexpr (std::is_arithmetic_v<Value>) {
      out_ += "\"sort_index\": " + std::to_string(value);
    } else {
      out_ += "\"name\": ";
      quoted(value);
    }
    out_ += "}}";
  }
  void number(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    out_ += buf;
  }
  void quoted(std::string_view s) {
    out_ += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out_ += buf;
      } else {
        out_ += c;
      }
    }
    out_ += '"';
  }

  std::string &out_;
  int64_t events_ = 0;
};

} // namespace pipesched::trace

#endif // PIPESCHED_PROGRAM_TRACEEVENTS_H
