//===- Bppsa.cpp - back-propagation as a parallel scan --------------------===//

#include "pipesched/Scheduling/Bppsa.h"
#include "pipesched/Scheduling/Saturating.h"

#include <algorithm>

using namespace pipesched::scheduling;

namespace {

// Bounds that keep every count below int32/int64 limits and the graph
// within memory (about 4 jobs per stage and microbatch).
constexpr int64_t kMaxStages = int64_t(1) << 20;
constexpr int64_t kMaxJobs = int64_t(1) << 24;
constexpr int64_t kMaxWorkers = int64_t(1) << 20;
constexpr int64_t kMaxWidth = int64_t(1) << 16;
constexpr int64_t kMaxRows = int64_t(1) << 24;
constexpr int64_t kMaxLayers = int64_t(1) << 10;

int32_t ceilLog2(int64_t n) {
  int32_t l = 0;
  while ((int64_t(1) << l) < n)
    ++l;
  return l;
}

int64_t toUnits(const BppsaShape &s, int64_t macsPerRow) {
  const int64_t macs = saturatingMul(macsPerRow, s.rows);
  return std::max<int64_t>(1, macs / s.macsPerUnit + (macs % s.macsPerUnit != 0));
}

// Nonzeros per row of one layer's Jacobian factor.
int64_t layerNonzeros(const BppsaShape &s) {
  switch (s.form) {
  case JacobianForm::Dense: return s.width;
  case JacobianForm::Diagonal: return 1;
  case JacobianForm::Banded: return s.band;
  }
  return s.width;
}

// The stage of sequence element k: a[0] = G (made at the last stage),
// a[k] = J_{S-k}.
int64_t stageOfElement(int64_t stages, int64_t k) { return k == 0 ? stages - 1 : stages - k; }

// A value of the scan array: the identity, or the result of `job`
// covering [lo, hi] with `factors` stage Jacobians.
struct Value {
  int64_t job = -1;
  int64_t lo = -1, hi = -1;
  bool identity() const { return job < 0; }
};

const char *kindName(BppsaJobKind k) {
  switch (k) {
  case BppsaJobKind::LossGradient: return "loss-grad";
  case BppsaJobKind::Jacobian: return "jacobian";
  case BppsaJobKind::UpSweep: return "up";
  case BppsaJobKind::DownSweep: return "down";
  case BppsaJobKind::WeightGradient: return "weight-grad";
  }
  return "?";
}

bool isCombine(BppsaJobKind k) {
  return k == BppsaJobKind::UpSweep || k == BppsaJobKind::DownSweep;
}

} // namespace

int64_t pipesched::scheduling::productNonzeros(const BppsaShape &s, int64_t factors) {
  if (s.form != JacobianForm::Banded)
    return layerNonzeros(s);
  // Bands add: the product of f factors of band k has f (k - 1) + 1.
  const int64_t spread = saturatingAdd(saturatingMul(saturatingMul(factors, s.layers), s.band - 1), 1);
  return std::min(s.width, spread);
}

int64_t pipesched::scheduling::jacobianDuration(const BppsaShape &s) {
  // The first layer's factor is written out (H nnz per row); each further
  // layer is a product with the composition so far.
  int64_t macs = saturatingMul(s.width, layerNonzeros(s));
  for (int64_t l = 1; l < s.layers; ++l) {
    BppsaShape one = s;
    one.layers = 1;
    macs = saturatingAdd(macs, saturatingMul(saturatingMul(s.width, productNonzeros(one, l)),
                                             layerNonzeros(s)));
  }
  return toUnits(s, macs);
}

int64_t pipesched::scheduling::productDuration(const BppsaShape &s, Product product,
                                               int64_t nnzLeft, int64_t nnzRight) {
  // C = B A: each of the H rows of B's block sums nnz(B) rows of A.
  if (product == Product::JV)
    return toUnits(s, saturatingMul(s.width, nnzRight));
  return toUnits(s, saturatingMul(saturatingMul(s.width, nnzLeft), nnzRight));
}

int64_t pipesched::scheduling::inputStepDuration(const BppsaShape &s) {
  return toUnits(s, saturatingMul(s.layers, saturatingMul(s.width, layerNonzeros(s))));
}

int64_t pipesched::scheduling::weightGradientDuration(const BppsaShape &s) {
  const int64_t perLayer =
      s.form == JacobianForm::Banded ? s.band * s.width : s.width * s.width;
  return toUnits(s, saturatingMul(s.layers, perLayer));
}

std::string pipesched::scheduling::checkBppsa(const BppsaShape &s) {
  auto range = [](const char *what, int64_t v, int64_t lo, int64_t hi) -> std::string {
    if (v >= lo && v <= hi)
      return "";
    return std::string("bppsa: ") + what + " = " + std::to_string(v) + " is outside [" +
           std::to_string(lo) + ", " + std::to_string(hi) + "]";
  };
  for (const std::string &e :
       {range("stages", s.stages, 1, kMaxStages),
        range("microbatches", s.microbatches, 1, kMaxJobs),
        range("workers", s.workers, 1, kMaxWorkers), range("width", s.width, 1, kMaxWidth),
        range("rows", s.rows, 1, kMaxRows), range("layers", s.layers, 1, kMaxLayers),
        range("macs per unit", s.macsPerUnit, 1, INT64_MAX)})
    if (!e.empty())
      return e;
  if (s.form == JacobianForm::Banded) {
    std::string e = range("band", s.band, 1, s.width);
    if (!e.empty())
      return e;
  }
  // Per microbatch: G, S - 1 Jacobians, fewer than 2 P combines, S weight
  // gradients.
  const int64_t perMicrobatch = 4 * (int64_t(1) << ceilLog2(s.stages)) + 2 * s.stages;
  if (s.microbatches > kMaxJobs / perMicrobatch)
    return "bppsa: " + std::to_string(s.stages) + " stages x " +
           std::to_string(s.microbatches) + " microbatches would make more than " +
           std::to_string(kMaxJobs) + " jobs";
  if (!s.stageWorker.empty()) {
    if (int64_t(s.stageWorker.size()) != s.stages)
      return "bppsa: " + std::to_string(s.stageWorker.size()) +
             " stage workers given for " + std::to_string(s.stages) + " stages";
    for (size_t i = 0; i < s.stageWorker.size(); ++i)
      if (s.stageWorker[i] < 0 || s.stageWorker[i] >= s.workers)
        return "bppsa: stage " + std::to_string(i) + " is placed on worker " +
               std::to_string(s.stageWorker[i]) + ", outside [0, " +
               std::to_string(s.workers) + ")";
  }
  return "";
}

namespace {
/// Builds the Blelloch scan of every microbatch's backward: the leaves (G,
/// then the Jacobians), the up-sweep, the down-sweep, and each stage's
/// weight gradient from its prefix.
class ScanBuilder {
public:
  explicit ScanBuilder(const BppsaShape &shape)
      : s(shape), S(shape.stages), L(ceilLog2(shape.stages)),
        P(int64_t(1) << L), a(static_cast<size_t>(P)) {
    g.paddedLength = P;
    g.steps = 2 * L;
  }

  BppsaGraph build() {
    for (b = 0; b < s.microbatches; ++b) {
      addLeaves();
      upSweep();
      // The root holds the whole product: g_0.
      const Value total = a[size_t(P - 1)];
      a[size_t(P - 1)] = Value{};
      downSweep();
      addWeightGradients(total);
    }
    return std::move(g);
  }

private:
  int64_t stageWorker(int64_t stage) const {
    return s.stageWorker.empty() ? stage % s.workers : s.stageWorker[size_t(stage)];
  }
  /// G (element 0) is a vector; the rest are products of stage Jacobians.
  int64_t nnzOf(const Value &v) const {
    return productNonzeros(s, v.hi - std::max<int64_t>(v.lo, 1) + 1);
  }
  /// A job of the current microbatch.
  BppsaJob newJob(BppsaJobKind kind) const {
    BppsaJob job;
    job.kind = kind;
    job.microbatch = b;
    return job;
  }
  int64_t add(BppsaJob job) {
    g.jobs.push_back(std::move(job));
    return int64_t(g.jobs.size() - 1);
  }

  /// The sequence: G, then J_{S-1} .. J_1; identity padding after.
  void addLeaves() {
    BppsaJob loss = newJob(BppsaJobKind::LossGradient);
    loss.stage = S - 1;
    loss.worker = stageWorker(S - 1);
    loss.lo = loss.hi = 0;
    loss.duration = toUnits(s, s.width);
    loss.outputFloats = s.rows * s.width;
    a[0] = Value{add(loss), 0, 0};
    for (int64_t k = 1; k < P; ++k) {
      a[size_t(k)] = Value{};
      if (k >= S)
        continue;
      BppsaJob jac = newJob(BppsaJobKind::Jacobian);
      jac.stage = S - k;
      jac.worker = stageWorker(S - k);
      jac.lo = jac.hi = k;
      jac.duration = jacobianDuration(s);
      jac.outputFloats = saturatingMul(s.rows * s.width, productNonzeros(s, 1));
      a[size_t(k)] = Value{add(jac), k, k};
    }
  }

  /// A product of two non-identity values; a move otherwise.
  Value combine(const Value &left, const Value &right, BppsaJobKind kind,
                int32_t level, int64_t position) {
    if (left.identity())
      return right;
    if (right.identity())
      return left;
    BppsaJob job = newJob(kind);
    job.level = level;
    job.position = position;
    job.product = left.lo == 0 ? Product::JV : Product::JJ;
    job.inputs = {uint32_t(left.job), uint32_t(right.job)};
    job.lo = left.lo;
    job.hi = right.hi;
    job.worker = s.placement == ScanPlacement::Owner
                     ? stageWorker(stageOfElement(S, right.hi))
                     : spread++ % s.workers;
    job.duration = productDuration(s, job.product, nnzOf(left), nnzOf(right));
    const Value result{-1, job.lo, job.hi};
    job.outputFloats = job.product == Product::JV
                           ? s.rows * s.width
                           : saturatingMul(s.rows * s.width, nnzOf(result));
    return Value{add(std::move(job)), left.lo, right.hi};
  }

  void upSweep() {
    for (int32_t d = 0; d < L; ++d) {
      spread = 0;
      const int64_t half = int64_t(1) << d, stride = half << 1;
      for (int64_t k = 0; k < P; k += stride)
        a[size_t(k + stride - 1)] =
            combine(a[size_t(k + half - 1)], a[size_t(k + stride - 1)],
                    BppsaJobKind::UpSweep, d, k + stride - 1);
    }
  }

  void downSweep() {
    for (int32_t d = L - 1; d >= 0; --d) {
      spread = 0;
      const int64_t half = int64_t(1) << d, stride = half << 1;
      for (int64_t k = 0; k < P; k += stride) {
        const size_t l = size_t(k + half - 1), r = size_t(k + stride - 1);
        const Value leftTotal = a[l];
        a[l] = a[r];
        a[r] = combine(a[l], leftTotal, BppsaJobKind::DownSweep, d, int64_t(r));
      }
    }
  }

  /// g_s is the exclusive prefix at position S - s; g_0 the total.
  void addWeightGradients(const Value &total) {
    for (int64_t st = S - 1; st >= 0; --st) {
      const Value &grad = st == 0 ? total : a[size_t(S - st)];
      BppsaJob w = newJob(BppsaJobKind::WeightGradient);
      w.stage = st;
      w.worker = stageWorker(st);
      w.inputs = {uint32_t(grad.job)};
      w.lo = grad.lo;
      w.hi = grad.hi;
      w.duration = weightGradientDuration(s);
      add(std::move(w));
    }
  }

  const BppsaShape &s;
  const int64_t S;
  const int32_t L;
  const int64_t P; // the padded length
  BppsaGraph g;
  std::vector<Value> a; // the scan's array, for the current microbatch
  int64_t b = 0;        // the current microbatch
  int64_t spread = 0;   // round-robin worker of a level's products
};
} // namespace

BppsaGraph pipesched::scheduling::buildBppsaScan(const BppsaShape &s) {
  return ScanBuilder(s).build();
}

std::string pipesched::scheduling::verifyBppsaScan(const BppsaShape &s,
                                                   const BppsaGraph &g) {
  const int64_t S = s.stages, B = s.microbatches;
  std::vector<uint8_t> weightSeen(size_t(S * B), 0), elementSeen(size_t(S * B), 0);
  for (size_t i = 0; i < g.jobs.size(); ++i) {
    const BppsaJob &j = g.jobs[i];
    const std::string at = "bppsa: job " + std::to_string(i) + " (" +
                           renderBppsaJob(g, uint32_t(i)) + ")";
    if (j.microbatch < 0 || j.microbatch >= B)
      return at + " names microbatch " + std::to_string(j.microbatch);
    if (j.worker < 0 || j.worker >= s.workers)
      return at + " runs on worker " + std::to_string(j.worker) + ", outside [0, " +
             std::to_string(s.workers) + ")";
    for (uint32_t in : j.inputs) {
      if (in >= i)
        return at + " reads job " + std::to_string(in) + ", which is not made before it";
      if (g.jobs[in].microbatch != j.microbatch)
        return at + " reads job " + std::to_string(in) + " of another microbatch";
      if (g.jobs[in].kind == BppsaJobKind::WeightGradient)
        return at + " reads a weight gradient";
    }
    switch (j.kind) {
    case BppsaJobKind::LossGradient:
    case BppsaJobKind::Jacobian: {
      const int64_t k = j.kind == BppsaJobKind::LossGradient ? 0 : S - j.stage;
      if (j.stage < 0 || j.stage >= S || (j.kind == BppsaJobKind::Jacobian && j.stage == 0))
        return at + " names stage " + std::to_string(j.stage);
      if (!j.inputs.empty() || j.lo != k || j.hi != k)
        return at + " must be sequence element " + std::to_string(k) + " and read nothing";
      uint8_t &seen = elementSeen[size_t(j.microbatch * S + k)];
      if (seen++)
        return at + " repeats sequence element " + std::to_string(k);
      break;
    }
    case BppsaJobKind::UpSweep:
    case BppsaJobKind::DownSweep: {
      if (j.inputs.size() != 2)
        return at + " must read two operands";
      const BppsaJob &l = g.jobs[j.inputs[0]], &r = g.jobs[j.inputs[1]];
      if (l.hi + 1 != r.lo)
        return at + " combines [" + std::to_string(l.lo) + "," + std::to_string(l.hi) +
               "] with [" + std::to_string(r.lo) + "," + std::to_string(r.hi) +
               "]: the left operand must end just before the right one starts "
               "(A <> B = B A does not commute)";
      if (j.lo != l.lo || j.hi != r.hi)
        return at + " claims [" + std::to_string(j.lo) + "," + std::to_string(j.hi) +
               "] but computes [" + std::to_string(l.lo) + "," + std::to_string(r.hi) + "]";
      const Product want = l.lo == 0 ? Product::JV : Product::JJ;
      if (j.product != want)
        return at + std::string(" is typed ") + (j.product == Product::JV ? "JV" : "JJ") +
               " but its left operand " + (want == Product::JV ? "holds" : "does not hold") +
               " G";
      break;
    }
    case BppsaJobKind::WeightGradient: {
      if (j.stage < 0 || j.stage >= S || j.inputs.size() != 1)
        return at + " must name a stage and read its gradient";
      const BppsaJob &in = g.jobs[j.inputs[0]];
      if (in.lo != 0 || in.hi != S - 1 - j.stage)
        return at + " reads [" + std::to_string(in.lo) + "," + std::to_string(in.hi) +
               "], not stage " + std::to_string(j.stage) + "'s output gradient [0," +
               std::to_string(S - 1 - j.stage) + "]";
      uint8_t &seen = weightSeen[size_t(j.microbatch * S + j.stage)];
      if (seen++)
        return at + " repeats stage " + std::to_string(j.stage) + "'s weight gradient";
      break;
    }
    }
  }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t st = 0; st < S; ++st)
      if (!weightSeen[size_t(b * S + st)])
        return "bppsa: microbatch " + std::to_string(b) + " has no weight gradient of stage " +
               std::to_string(st);
  return "";
}

BppsaMetrics pipesched::scheduling::measureBppsa(const BppsaShape &s, const BppsaGraph &g) {
  BppsaMetrics m;
  m.steps = g.steps;
  std::vector<int64_t> finish(g.jobs.size(), 0);
  std::vector<int32_t> depth(g.jobs.size(), 0);
  for (size_t i = 0; i < g.jobs.size(); ++i) {
    const BppsaJob &j = g.jobs[i];
    if (j.microbatch != 0)
      break; // microbatch-major: the first microbatch's jobs come first
    int64_t start = 0;
    int32_t d = 0;
    for (uint32_t in : j.inputs) {
      start = std::max(start, finish[in]);
      d = std::max(d, depth[in]);
    }
    finish[i] = saturatingAdd(start, j.duration);
    depth[i] = d + (isCombine(j.kind) ? 1 : 0);
    m.criticalPath = std::max(m.criticalPath, finish[i]);
    m.productDepth = std::max(m.productDepth, depth[i]);
    m.work = saturatingAdd(m.work, j.duration);
  }
  const int64_t loss = toUnits(s, s.width), step = inputStepDuration(s),
                weight = weightGradientDuration(s);
  m.sequentialPath =
      saturatingAdd(saturatingAdd(loss, saturatingMul(s.stages - 1, step)), weight);
  m.workersBound = std::max(m.criticalPath, m.work / s.workers + (m.work % s.workers != 0));
  m.sequentialWork = saturatingAdd(saturatingAdd(loss, saturatingMul(s.stages - 1, step)),
                                   saturatingMul(s.stages, weight));
  return m;
}

std::string pipesched::scheduling::renderBppsaJob(const BppsaGraph &g, uint32_t index) {
  const BppsaJob &j = g.jobs[index];
  std::string line = "b" + std::to_string(j.microbatch) + " " + kindName(j.kind);
  if (isCombine(j.kind))
    line += " L" + std::to_string(j.level) + " @" + std::to_string(j.position);
  else
    line += " s" + std::to_string(j.stage);
  line += " [" + std::to_string(j.lo) + "," + std::to_string(j.hi) + "]";
  if (j.product != Product::None)
    line += j.product == Product::JV ? " JV" : " JJ";
  line += " w" + std::to_string(j.worker);
  if (!j.inputs.empty()) {
    line += " <-";
    for (uint32_t in : j.inputs)
      line += " " + std::to_string(in);
  }
  line += " (d=" + std::to_string(j.duration) + ")";
  return line;
}
