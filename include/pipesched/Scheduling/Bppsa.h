//===- Bppsa.h - back-propagation as a parallel scan -------------*- C++ -*-===//
//
// Dialect-free. BPPSA (Wang, Bai, Pekhimenko, MLSys 2020): the backward of
// one microbatch through a chain of S stages as a Blelloch scan. With J_s
// the transposed Jacobian of stage s (it maps the gradient of stage s's
// output to the gradient of its input, the output of stage s-1) and G the
// loss gradient of the last stage's output, the operator A <> B = B A is
// associative, not commutative, and scanning
//
//   a = [G, J_{S-1}, J_{S-2}, ..., J_1]          (a[k] = J_{S-k}, k >= 1)
//
// gives every stage's output gradient g_s = J_{s+1} ... J_{S-1} G as the
// prefix a[0] <> ... <> a[S-1-s]: the exclusive scan yields g_{S-1} ..
// g_1 at positions 1 .. S-1 and the up-sweep's root, the total, is g_0.
// Each stage's weight gradient then follows locally from g_s and its input
// activation, the weight half of a split backward.
//
// The scan is Blelloch's work-efficient one over P = 2^ceil(log2 S)
// positions, the missing ones padded with the identity at the end: an
// up-sweep of log2 P levels builds partial products in a tree, a down-sweep
// of log2 P levels distributes prefixes; 2 ceil(log2 S) steps in all
// instead of S - 1 sequential ones. A combine with the identity is a move,
// not a job (the first down-sweep step is all moves), so the longest chain
// of products is shorter still (`Metrics::productDepth`). A combine whose
// left operand starts at G is a Jacobian-vector product (JV, a vector per
// row); the others are Jacobian-Jacobian products (JJ, a matrix per row).
//
// Every quantity is per row of the microbatch: a stage's activation is
// `rows x width`, its Jacobian block-diagonal with one width x width block
// per row, held dense, diagonal (an elementwise stage) or in CSR with a
// band of nonzeros per row.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_BPPSA_H
#define PIPESCHED_SCHEDULING_BPPSA_H

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::scheduling {

/// How a stage's Jacobian block is stored. `Banded`: CSR with `band`
/// nonzeros per row (a banded linear layer); a product of m banded factors
/// has min(width, m (band - 1) + 1) nonzeros per row, which the cost model
/// follows.
enum class JacobianForm { Dense, Diagonal, Banded };

/// Where a combine runs. `Owner`: on the worker of the stage that made the
/// newest element of its right operand (the data it waited for is there).
/// `Spread`: round robin over the workers within each level, by the
/// combine's position in the level.
enum class ScanPlacement { Owner, Spread };

struct BppsaShape {
  int64_t stages = 1;       ///< S, a chain
  int64_t microbatches = 1; ///< B
  int64_t workers = 1;      ///< W
  int64_t width = 1;        ///< H: a stage's activation is rows x width
  int64_t rows = 1;         ///< rows of a microbatch
  int64_t layers = 1;       ///< linear + activation layers per stage
  JacobianForm form = JacobianForm::Dense;
  int64_t band = 1;         ///< nonzeros per Jacobian row when Banded
  ScanPlacement placement = ScanPlacement::Owner;
  /// Multiply-adds per time unit: durations are ceil(MACs / this), >= 1.
  int64_t macsPerUnit = 1;
  /// The worker of each stage (size S); empty: stage s on s mod W.
  std::vector<int64_t> stageWorker;
};

enum class BppsaJobKind {
  LossGradient, ///< G from the last stage's output (after its forward)
  Jacobian,     ///< J_s from stage s's input activation (after its forward)
  UpSweep,      ///< a product of the up-sweep
  DownSweep,    ///< a product of the down-sweep
  WeightGradient ///< stage s's weight gradient from g_s and its activation
};

enum class Product { None, JJ, JV };

struct BppsaJob {
  BppsaJobKind kind;
  Product product = Product::None;
  int64_t microbatch = 0;
  /// The stage (LossGradient, Jacobian, WeightGradient); -1 for combines.
  int64_t stage = -1;
  /// Combines: the sweep level (0: the leaves' parents) and the position
  /// (index into the scan array) that the result is written to.
  int32_t level = -1;
  int64_t position = -1;
  int64_t worker = 0;
  /// Jobs whose results this one reads (combines: left then right operand;
  /// WeightGradient: the job that made g_s, or LossGradient for S-1).
  std::vector<uint32_t> inputs;
  /// The sequence interval [lo, hi] the result covers (combines, Jacobian,
  /// LossGradient); WeightGradient: the interval it reads.
  int64_t lo = -1, hi = -1;
  int64_t duration = 0;
  /// Floats of the result: rows * width for a vector, rows * the stored
  /// entries of a block for a Jacobian (0 for WeightGradient: it
  /// accumulates into the stage's gradient).
  int64_t outputFloats = 0;
};

struct BppsaGraph {
  std::vector<BppsaJob> jobs; ///< in a topological order, microbatch-major
  int64_t paddedLength = 1;   ///< P
  int32_t steps = 0;          ///< 2 log2 P (0 when S = 1)
};

/// Figures of one microbatch's backward on an unbounded number of workers
/// (longest paths through durations; microbatches are alike).
struct BppsaMetrics {
  int32_t steps = 0;          ///< the scan's algorithm steps, 2 ceil(log2 S)
  int32_t productDepth = 0;   ///< the longest chain of products
  int64_t criticalPath = 0;   ///< BPPSA: first Jacobian to last weight gradient
  int64_t sequentialPath = 0; ///< back-propagation: S - 1 input-gradient
                              ///< steps, then stage 0's weight gradient
  int64_t work = 0;           ///< BPPSA: every job's duration
  int64_t sequentialWork = 0; ///< back-propagation: every step and weight half
  /// A lower bound of BPPSA's time on W workers: max(criticalPath,
  /// ceil(work / W)); a schedule on the workers (the simulator) is needed
  /// for the actual makespan.
  int64_t workersBound = 0;
};

/// "" or why the shape cannot be scanned; bounds every size before any
/// allocation proportional to it.
std::string checkBppsa(const BppsaShape &shape);

/// The jobs of every microbatch's scan. Precondition: checkBppsa is "".
BppsaGraph buildBppsaScan(const BppsaShape &shape);

/// Proves by symbolic execution that `graph` computes each stage's output
/// gradient: every edge names an earlier job, a combine joins adjacent
/// intervals in sequence order (left operand first: the operator does not
/// commute) and is typed JV exactly when its left operand starts at G,
/// every stage of every microbatch has one weight gradient reading exactly
/// its prefix [0, S-1-s]. "" or the first violation, naming the job.
std::string verifyBppsaScan(const BppsaShape &shape, const BppsaGraph &graph);

/// Metrics of microbatch 0 of `graph`.
BppsaMetrics measureBppsa(const BppsaShape &shape, const BppsaGraph &graph);

/// The cost model, per microbatch (rows * per-row multiply-adds, converted
/// by macsPerUnit). Per row and layer, with H = width and k = band:
///   Jacobian of a stage      dense H^2,  diagonal H,  banded k H
///   JJ of factors (nnz a, b) dense H^3,  diagonal H,  banded H a b
///   JV with a factor (nnz a) dense H^2,  diagonal H,  banded H a
///   sequential input step    as a JV with one stage's Jacobian
///   weight gradient          H^2 (a dense linear layer), k H when banded
/// `nnz` arguments are nonzeros per Jacobian row of each operand.
int64_t jacobianDuration(const BppsaShape &shape);
int64_t productDuration(const BppsaShape &shape, Product product, int64_t nnzLeft,
                        int64_t nnzRight);
int64_t inputStepDuration(const BppsaShape &shape);
int64_t weightGradientDuration(const BppsaShape &shape);
/// Nonzeros per row of a product of `factors` stage Jacobians.
int64_t productNonzeros(const BppsaShape &shape, int64_t factors);

/// One line per job, for tests and debugging:
///   "b0 up L1 @3 [0,3] JV w1 <- 2 5 (d=4)".
std::string renderBppsaJob(const BppsaGraph &graph, uint32_t index);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_BPPSA_H
