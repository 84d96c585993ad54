//===- Calibration.cpp - measured costs as a step's durations -------------===//

#include "pipesched/Scheduling/Calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace pipesched::scheduling;

static constexpr double kMaxNs = 9007199254740992.0; // 2^53

/// A measured number as written: `-5`, `1715586.5`, `1e+300` (not
/// std::to_string's six fixed decimals, 300 digits for 1e300).
static std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", v);
  return text;
}

static std::string checkList(const char *name, const std::vector<double> &v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]) || v[i] < 0 || v[i] >= kMaxNs)
      return std::string(name) + "[" + std::to_string(i) + "] = " +
             number(v[i]) +
             " is not a duration (finite, >= 0, below 2^53 ns)";
  return "";
}

std::string MeasuredCosts::check() const {
  if (fwd.empty())
    return "no stage was measured";
  if (bwd.size() != fwd.size())
    return "fwd lists " + std::to_string(fwd.size()) + " stages, bwd " +
           std::to_string(bwd.size());
  if (!bwdWeight.empty() && bwdWeight.size() != fwd.size())
    return "fwd lists " + std::to_string(fwd.size()) + " stages, bwd_w " +
           std::to_string(bwdWeight.size());
  if (!optimizer.empty() && optimizer.size() != fwd.size())
    return "fwd lists " + std::to_string(fwd.size()) + " stages, optimizer " +
           std::to_string(optimizer.size());
  for (auto [name, list] :
       {std::pair{"fwd", &fwd}, std::pair{"bwd", &bwd},
        std::pair{"bwd_w", &bwdWeight}, std::pair{"optimizer", &optimizer}})
    if (std::string error = checkList(name, *list); !error.empty())
      return error;
  if (actBytes < 0 || weightBytes < 0)
    return "sizes must be non-negative";
  for (auto [name, v] : {std::pair{"transfer latency", latencyNs},
                         std::pair{"transfer per_byte", nsPerByte}})
    if (!std::isfinite(v) || v < 0 || v >= kMaxNs)
      return std::string(name) + " = " + number(v) +
             " is not a duration (finite, >= 0, below 2^53 ns)";
  if (reduceBytes < 0 || !std::isfinite(reduceNs) || reduceNs < 0 || reduceNs >= kMaxNs)
    return "the all-reduce time is not a duration (finite, >= 0, below 2^53 ns)";
  if (latencyNs + nsPerByte * double(actBytes) >= kMaxNs)
    return "one transfer of act_bytes takes 2^53 ns or more";
  // calibrate() scales the measured all-reduce to weight_bytes; beyond 2^53
  // ns its rounding to int64 would overflow.
  if (reduceBytes > 0 && weightBytes > 0 &&
      reduceNs * double(weightBytes) / double(reduceBytes) >= kMaxNs)
    return "the all-reduce time scaled to weight_bytes (" +
           std::to_string(weightBytes) + " bytes, measured on " +
           std::to_string(reduceBytes) + ") takes 2^53 ns or more";
  return "";
}

CalibratedCosts pipesched::scheduling::calibrate(const MeasuredCosts &m,
                                                 int64_t tickNs, bool split) {
  auto ticks = [&](double ns) {
    return static_cast<int64_t>(std::llround(ns / double(tickNs)));
  };
  CalibratedCosts c;
  for (size_t s = 0; s < m.fwd.size(); ++s) {
    c.fwd.push_back(ticks(m.fwd[s]));
    double weight = m.bwdWeight.empty() ? 0 : m.bwdWeight[s];
    if (split) {
      c.bwd.push_back(ticks(m.bwd[s]));
      c.bwdWeight.push_back(ticks(weight));
    } else {
      c.bwd.push_back(ticks(m.bwd[s] + weight));
    }
  }
  for (double ns : m.optimizer)
    c.optimizer.push_back(ticks(ns));
  c.transfer = ticks(m.latencyNs + m.nsPerByte * double(m.actBytes));
  c.latency = ticks(m.latencyNs);
  if (m.reduceBytes > 0)
    c.reduce = ticks(m.weightBytes > 0 ? m.reduceNs * double(m.weightBytes) /
                                             double(m.reduceBytes)
                                       : m.reduceNs);
  // Bytes per second; per_byte >= 2^-53 ns keeps it within int64.
  c.bandwidth = m.nsPerByte > 0 ? std::llround(std::min(1e9 / m.nsPerByte, 9e18)) : 0;
  c.actBytes = m.actBytes;
  c.weightBytes = m.weightBytes;
  return c;
}

std::string CalibratedCosts::verify(const MeasuredCosts &from,
                                    bool split) const {
  size_t n = from.fwd.size();
  if (fwd.size() != n || bwd.size() != n ||
      bwdWeight.size() != (split ? n : 0))
    return "calibrated lists do not match the measured stages";
  if (optimizer.size() != from.optimizer.size())
    return "calibrated optimizer steps do not match the measured ones";
  for (const std::vector<int64_t> *list : {&fwd, &bwd, &bwdWeight, &optimizer})
    for (int64_t v : *list)
      if (v < 0)
        return "a calibrated duration is negative";
  if (transfer < 0 || latency < 0 || bandwidth < 0 || reduce < 0)
    return "the calibrated transfer is negative";
  return "";
}
