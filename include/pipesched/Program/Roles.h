//===- Roles.h - the tensors a compute op reads and writes ------*- C++ -*-===//
//
// The one statement of which tensors each compute op of a program reads and
// writes, by operand role, for a stage graph (docs/program-format.md). The
// compiler's writer names a job's writes and a weight half's reads by it;
// the runtime's loader checks every compute op of a file against it.
// Plain C++17, shared by the compiler and the runtime like Schema.h.
//
//  - forward (s, b): reads act(p, b) for s's predecessors p in edge order
//    (none: the microbatch's data); writes act(s, b);
//  - backward (s, b): reads grad(t, b) for s's successors t in edge order
//    (at a sink: its own output act(s, b)), then what its forward read;
//    writes grad(s, b) iff s has predecessors;
//  - backward_weight (s, b): reads what its backward reads, writes nothing;
//    in a scanned backward (BPPSA) it reads a scan tensor (its output's
//    gradient), then what its forward read;
//  - loss_grad (s, b): reads act(s, b); jacobian (s, b): what its forward
//    read; combine: two scan tensors; each writes one scan tensor.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_PROGRAM_ROLES_H
#define PIPESCHED_PROGRAM_ROLES_H

#include "pipesched/Program/Schema.h"

namespace pipesched::program {

/// Stands for a role any scan tensor fills: the writer numbers scan tensors
/// in program order, so the rule cannot name one.
inline constexpr int64_t kAnyScanTensor = -2;

/// Calls f(id) for each tensor op (kind, s, b) reads (`reads`) or writes,
/// in operand order. `preds` and `succs` are stage s's predecessors and
/// successors in edge order (ranges of integers); `scanned`: the step's
/// backward is a scan; `microbatches`: the step's B.
template <class Stages, class F>
void forEachRole(OpKind kind, bool scanned, bool reads, int64_t s, int64_t b,
                 int64_t microbatches, const Stages &preds,
                 const Stages &succs, F &&f) {
  auto act = [&](int64_t stage) {
    return tensorId(TensorKind::Act, stage, b, microbatches);
  };
  if (!reads) {
    if (kind == OpKind::Forward)
      f(act(s));
    else if (kind == OpKind::Backward && !preds.empty())
      f(tensorId(TensorKind::Grad, s, b, microbatches));
    else if (isScan(kind))
      f(kAnyScanTensor);
    return;
  }
  if (kind == OpKind::LossGrad) {
    f(act(s));
    return;
  }
  if (kind == OpKind::Combine) {
    f(kAnyScanTensor);
    f(kAnyScanTensor);
    return;
  }
  if (kind == OpKind::BackwardWeight && scanned)
    f(kAnyScanTensor); // the gradient of its output, from the scan
  else if (kind != OpKind::Forward && kind != OpKind::Jacobian) {
    if (succs.empty())
      f(act(s));
    for (auto t : succs)
      f(tensorId(TensorKind::Grad, int64_t(t), b, microbatches));
  }
  for (auto p : preds)
    f(act(int64_t(p)));
}

} // namespace pipesched::program

#endif // PIPESCHED_PROGRAM_ROLES_H
