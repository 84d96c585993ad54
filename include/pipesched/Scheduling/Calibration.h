//===- Calibration.h - measured costs as a step's durations -----*- C++ -*-===//
//
// Dialect-free: turns what `pipeline-run --profile` measured (nanoseconds
// per stage and direction, a transfer model `latency + per_byte * bytes`)
// into the integer durations of a step's cost, in ticks of a given length.
// docs/calibration.md.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_CALIBRATION_H
#define PIPESCHED_SCHEDULING_CALIBRATION_H

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::scheduling {

/// A cost file's contents.
struct MeasuredCosts {
  std::vector<double> fwd, bwd; ///< ns per stage
  std::vector<double> bwdWeight; ///< ns per stage; empty: backwards were whole
  std::vector<double> optimizer; ///< ns per stage; empty: not measured
  int64_t actBytes = 0, weightBytes = 0;
  double latencyNs = 0, nsPerByte = 0; ///< one tensor between workers
  /// An all-reduce of reduceBytes took reduceNs (0 bytes: not measured).
  int64_t reduceBytes = 0;
  double reduceNs = 0;

  /// Per-stage lists of one length (bwd_w empty or that length), every
  /// figure finite, non-negative and below 2^53 ns (about 104 days).
  /// Returns an empty string or the first problem.
  std::string check() const;
};

/// The durations of a step's cost, in ticks.
struct CalibratedCosts {
  std::vector<int64_t> fwd, bwd, bwdWeight;
  std::vector<int64_t> optimizer; ///< empty when not measured
  int64_t transfer = 0; ///< one activation (actBytes) between workers
  /// The link: a message of b bytes takes latency + b / bandwidth (bytes
  /// per second); bandwidth 0 when per_byte was 0 (transfer = latency).
  int64_t latency = 0, bandwidth = 0;
  /// An all-reduce of one stage's weights (weightBytes, scaled from what
  /// was measured); 0 when not measured.
  int64_t reduce = 0;
  int64_t actBytes = 0, weightBytes = 0;

  /// Every duration non-negative, lists of the measured length (bwd_w
  /// empty unless split). Empty string or the first problem.
  std::string verify(const MeasuredCosts &from, bool split) const;
};

/// Rounds `measured` (which passes check()) to ticks of `tickNs`
/// nanoseconds. `split`: keep the weight-gradient half apart (needs
/// measured bwd_w); otherwise a measured bwd_w is added to bwd, as a
/// whole backward computes both.
CalibratedCosts calibrate(const MeasuredCosts &measured, int64_t tickNs,
                          bool split);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_CALIBRATION_H
