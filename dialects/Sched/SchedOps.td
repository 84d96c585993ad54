//===- SchedOps.td - sched dialect operations ---------------*- tablegen -*-===//

#ifndef PIPESCHED_SCHED_OPS_TD
#define PIPESCHED_SCHED_OPS_TD

include "Sched/SchedDialect.td"
include "Sched/SchedTypes.td"
include "Sched/SchedAttrs.td"
include "Sched/SchedInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/Properties.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"

// Integer fields are native properties: a plain int64_t stored in the op,
// with no attribute uniqued per value (a step holds millions of jobs).
def NonNegI64Prop : ConfinedProp<I64Prop, CPred<"$_self >= 0">,
                                 "non-negative 64-bit integer">;
def PositiveI64Prop : ConfinedProp<I64Prop, CPred<"$_self > 0">,
                                   "positive 64-bit integer">;
// A message tag: what every MPI accepts (MPI_TAG_UB is at least 32767;
// the runtime checks its own bound, 2^31 - 1 at most, against the program).
def TagProp : ConfinedProp<I64Prop,
    CPred<"$_self >= 0 && $_self <= 2147483647">, "tag in [0, 2^31)">;

//===----------------------------------------------------------------------===//
// sched.step
//===----------------------------------------------------------------------===//

def Sched_StepOp : Sched_Op<"step", [
    IsolatedFromAbove, NoTerminator, SingleBlock, Symbol]> {
  let summary = "one training step: S stages, B microbatches, W workers";
  let description = [{
    Holds the jobs of one training step. With an empty body the op is a
    *spec* that `--sched-expand` turns into the full graph of `2*S*B` jobs.
    Jobs appear in a topological order (SSA dominance), so a backward can
    never be listed before its forward.

    ```mlir
    sched.step stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> {
      %0 = sched.forward (0, 0)
      %1 = sched.forward (1, 0) from %0
      %2 = sched.backward (1, 0) grad %1 act %0
      %3 = sched.backward (0, 0) grad %2
    }
    ```

    A non-empty body must hold every job exactly once, unless the step
    carries `partial` (a graph that a later pass completes).

    A step may have a symbol name, unique in its module, that its
    `sched.program` keeps when lowered (tests anchor `CHECK-LABEL` on it):

    ```mlir
    sched.step @one_f_one_b stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b {
    }
    ```

    The scheme: a named `strategy` (`#sched.lpp<groups = 2, ring = 4>`, ...)
    and/or explicit placement maps over `(s, b, d)`: `compute` is
    `w_compute`, `weights` is `w_weights` (explicit maps win over the
    strategy's); `priority` picks among ready jobs of a worker: a named
    policy (`<backward_first>`, or a static order such as `<interleaved>`)
    or a lexicographic key, an affine map over `(s, b, d)` or `(s, b, d, p)`
    whose results are compared in turn, smaller first (`p` is the job's
    position in its microbatch's sweep: `s` forward, `2S-1-s` backward,
    `3S-1-s` weight gradient). `cap` bounds each worker's live activations;
    `--sched-expand` fills in the strategy's cap when the step keeps the
    strategy's priority.

    ```mlir
    sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
        priority affine_map<(s, b, d) -> (b floordiv 4, d, s)> cap <none> {
    }
    ```

    `nodes` groups the workers into nodes, with the cost of the link
    between nodes (`#sched.nodes<size = 4, transfer = 12>`): a transfer
    between workers of different nodes takes the inter-node time.

    `layers` gives the model's layer count per stage, one positive count per
    stage: the partition of a chain of layers into stages that
    `--sched-partition` chose (docs/partition.md). Lowering carries it into
    the program, and `pipeline-run` builds stage `s` of its MLP with
    `layers[s]` layers (without it, `--layers-per-stage` each).

    ```mlir
    sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
        cost <fwd = [6, 5, 5, 4], bwd = [12, 10, 10, 8]> layers [3, 1, 2, 2] {
    }
    ```
  }];
  let arguments = (ins
    PositiveI64Prop:$stages,
    PositiveI64Prop:$microbatches,
    PositiveI64Prop:$workers,
    OptionalAttr<Sched_StageGraphAttr>:$stage_graph,
    OptionalAttr<Sched_TiedAttr>:$tied,
    OptionalAttr<Sched_StrategyAttrInterface>:$strategy,
    OptionalAttr<AffineMapAttr>:$compute_map,
    OptionalAttr<AffineMapAttr>:$weights_map,
    OptionalAttr<Sched_PriorityAttr>:$priority,
    OptionalAttr<Sched_MemoryCapAttr>:$memory_cap,
    OptionalAttr<Sched_NodesAttr>:$nodes,
    OptionalAttr<Sched_CostAttr>:$cost,
    OptionalAttr<DenseI64ArrayAttr>:$layers,
    UnitAttr:$partial,
    OptionalAttr<SymbolNameAttr>:$sym_name
  );
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    ($sym_name^)? `stages` `=` $stages `,` `microbatches` `=` $microbatches `,`
    `workers` `=` $workers (`graph` $stage_graph^)? (`strategy` $strategy^)?
    (`tied` $tied^)? (`compute` custom<MapLiteral>($compute_map)^)?
    (`weights` custom<MapLiteral>($weights_map)^)?
    (`priority` custom<Priority>($priority)^)? (`cap` $memory_cap^)?
    (`nodes` $nodes^)? (`cost` $cost^)? (`layers` $layers^)? (`partial` $partial^)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let builders = [
    // A spec with a cost model and nothing else (importers add the jobs).
    OpBuilder<(ins "int64_t":$stages, "int64_t":$microbatches,
                   "int64_t":$workers, "CostAttr":$cost), [{
      build($_builder, $_state, stages, microbatches, workers, {}, {}, {}, {},
            {}, {}, {}, {}, cost, {}, {}, {});
    }]>
  ];
  let extraClassDeclaration = [{
    /// A step may be named (a symbol, unique in its module) or not.
    bool isOptionalSymbol() { return true; }
    /// The stages whose forwards feed stage `s` (the chain: `s - 1`).
    void getStagePreds(int64_t s, ::llvm::SmallVectorImpl<int64_t> &preds);
    /// The stages that stage `s` feeds (the chain: `s + 1`).
    void getStageSuccs(int64_t s, ::llvm::SmallVectorImpl<int64_t> &succs);
    /// Number of jobs per (stage, microbatch): 2, or 3 with a split backward.
    int64_t getJobsPerPair() { return getCostOrDefault().isSplitBackward() ? 3 : 2; }
    /// The cost model, or the default one when the step has none.
    CostAttr getCostOrDefault();
    /// Whether the body is still a spec (no jobs yet).
    bool isSpec() { return getBody().empty() || getBody().front().empty(); }
    /// The body block, created if the region is empty.
    ::mlir::Block &getOrCreateBody();
  }];
}

//===----------------------------------------------------------------------===//
// Jobs
//===----------------------------------------------------------------------===//

class Sched_JobOp<string mnemonic, list<Trait> traits = [],
                  list<string> overridden = []>
    : Sched_Op<mnemonic, !listconcat(traits, [
        ParentOneOf<["StepOp", "RankOp"]>,
        DeclareOpInterfaceMethods<Sched_JobOpInterface, overridden>])> {
  let hasVerifier = 1;
}

/// A job that may carry its own duration (`duration`), which wins over the
/// step's cost model.
class Sched_TimedJobOp<string mnemonic, list<Trait> traits = []>
    : Sched_JobOp<mnemonic, traits, ["getExplicitDuration"]> {
  let extraClassDefinition = [{
    std::optional<int64_t> $cppClass::getExplicitDuration() {
      return getDuration();
    }
  }];
}

def Sched_ForwardOp : Sched_JobOp<"forward"> {
  let summary = "forward of stage `s` on microbatch `b`";
  let description = [{
    Computes `x[s+1][b] = F_s x[s][b]`. Its operand is the activation made by
    the forward of the previous stage on the same microbatch (none at stage
    0); its result feeds the next stage's forward and the backwards that need
    it. `on` is `w_compute`, `weights` is `w_weights`. `overlapped` runs it
    fused with the backward that follows it in its worker's order (and that
    backward's weight half): DualPipe's overlapped F&B pair, one unit of the
    cost's `fwd_bwd` duration (a runtime may run the two one after the
    other).

    ```mlir
    %1 = sched.forward (1, 0) from %0 on 1 weights 1
    ```
  }];
  let arguments = (ins
    NonNegI64Prop:$stage,
    NonNegI64Prop:$microbatch,
    Variadic<Sched_TensorType>:$inputs,
    OptionalProp<NonNegI64Prop>:$compute,
    OptionalProp<NonNegI64Prop>:$weights,
    OptionalProp<NonNegI64Prop>:$order,
    OptionalProp<NonNegI64Prop>:$start,
    OptionalProp<NonNegI64Prop>:$end,
    UnitProp:$overlapped
  );
  let results = (outs Sched_TensorType:$output);
  let builders = [
    // An unplaced job: what --sched-expand and the importers create.
    OpBuilder<(ins "int64_t":$stage,
                   "int64_t":$microbatch,
                   "::mlir::ValueRange":$inputs), [{
      build($_builder, $_state, TensorType::get($_builder.getContext()),
            stage, microbatch, inputs, {}, {}, {}, {}, {}, false);
    }]>
  ];
  let assemblyFormat = [{
    `(` $stage `,` $microbatch `)` (`from` $inputs^)?
    (`on` $compute^)? (`weights` $weights^)? (`order` $order^)?
    (`overlapped` $overlapped^)? (`at` $start^ `to` $end)? attr-dict
  }];
}

def Sched_BackwardOp : Sched_JobOp<"backward", [AttrSizedOperandSegments]> {
  let summary = "backward of stage `s` on microbatch `b`";
  let description = [{
    Computes `z[s][b] = B_s(x[s][b]) z[s+1][b]`. `grad` is the gradient made
    by the next stage's backward, or, at the last stage, the output of the
    stage's own forward (the loss is computed from it). `act` is the
    activation the stage's forward consumed (none at stage 0): it must stay
    live until this job runs. With a split backward, `whole` states that its
    weight half follows it at once as one backward (torch's `B` in a split
    schedule), so that exports write it back as such.

    ```mlir
    %2 = sched.backward (1, 0) grad %1 act %0 on 1 weights 1
    ```
  }];
  let arguments = (ins
    NonNegI64Prop:$stage,
    NonNegI64Prop:$microbatch,
    Variadic<Sched_TensorType>:$grads,
    Variadic<Sched_TensorType>:$acts,
    OptionalProp<NonNegI64Prop>:$compute,
    OptionalProp<NonNegI64Prop>:$weights,
    OptionalProp<NonNegI64Prop>:$order,
    OptionalProp<NonNegI64Prop>:$start,
    OptionalProp<NonNegI64Prop>:$end,
    UnitProp:$whole
  );
  let results = (outs Sched_TensorType:$output);
  let builders = [
    OpBuilder<(ins "int64_t":$stage,
                   "int64_t":$microbatch,
                   "::mlir::ValueRange":$grads, "::mlir::ValueRange":$acts), [{
      build($_builder, $_state, TensorType::get($_builder.getContext()),
            stage, microbatch, grads, acts, {}, {}, {}, {}, {}, false);
    }]>
  ];
  let assemblyFormat = [{
    `(` $stage `,` $microbatch `)` (`grad` $grads^)? (`act` $acts^)?
    (`on` $compute^)? (`weights` $weights^)? (`order` $order^)?
    (`whole` $whole^)? (`at` $start^ `to` $end)? attr-dict
  }];
}

def Sched_BackwardWeightOp : Sched_TimedJobOp<"backward_weight", [
    AttrSizedOperandSegments]> {
  let summary = "weight-gradient part of a split backward (zero bubble)";
  let description = [{
    With a split backward (the step's cost has `bwd_w`), `sched.backward`
    computes only the gradient with respect to the stage input (`Bi`, on the
    critical path) and this job the gradient with respect to the weights
    (`Bw`, off it). It depends on the `Bi` of the same stage and microbatch,
    whose inputs it re-reads.

    ```mlir
    sched.backward_weight(1, 0) after %2 on 1
    ```

    In a scanned backward (`--sched-bppsa`) there is no `Bi`: the job reads
    the gradient of its stage's output that the scan made (`grad`: the loss
    gradient at the last stage, else the scan's product for that stage) and
    the activations its forward read (`act`), and carries its `duration`.

    ```mlir
    sched.backward_weight(1, 0) grad %7 act %0 on 1 weights 1 duration 4
    ```
  }];
  let arguments = (ins
    NonNegI64Prop:$stage,
    NonNegI64Prop:$microbatch,
    Optional<Sched_TensorType>:$input,
    Optional<Sched_TensorType>:$grad,
    Variadic<Sched_TensorType>:$acts,
    OptionalProp<NonNegI64Prop>:$compute,
    OptionalProp<NonNegI64Prop>:$weights,
    OptionalProp<NonNegI64Prop>:$order,
    OptionalProp<NonNegI64Prop>:$start,
    OptionalProp<NonNegI64Prop>:$end,
    OptionalProp<NonNegI64Prop>:$duration
  );
  let builders = [
    OpBuilder<(ins "int64_t":$stage,
                   "int64_t":$microbatch,
                   "::mlir::Value":$input), [{
      build($_builder, $_state, stage, microbatch, input, ::mlir::Value(),
            ::mlir::ValueRange(), {}, {}, {}, {}, {}, {});
    }]>,
    // The weight gradient of a scanned backward.
    OpBuilder<(ins "int64_t":$stage,
                   "int64_t":$microbatch,
                   "::mlir::Value":$grad, "::mlir::ValueRange":$acts), [{
      build($_builder, $_state, stage, microbatch, ::mlir::Value(), grad,
            acts, {}, {}, {}, {}, {}, {});
    }]>
  ];
  let assemblyFormat = [{
    `(` $stage `,` $microbatch `)` (`after` $input^)? (`grad` $grad^)?
    (`act` $acts^)? (`on` $compute^)? (`weights` $weights^)?
    (`order` $order^)? (`duration` $duration^)? (`at` $start^ `to` $end)?
    attr-dict
  }];
  let extraClassDeclaration = [{
    /// The one statement of the weight half's reads: a split backward's
    /// weight half reads what its backward read (the backward's inputs,
    /// wherever it runs); a scanned backward's reads `grad` and `act`. In a
    /// step the verifier makes this the same as having `after` (an input).
    bool rereadsBackward() { return !getGrad(); }
  }];
}

//===----------------------------------------------------------------------===//
// A backward as a parallel scan (BPPSA)
//===----------------------------------------------------------------------===//

def Sched_LossGradOp : Sched_TimedJobOp<"loss_grad"> {
  let summary = "the loss gradient of a microbatch: the first element of its scan";
  let description = [{
    `--sched-bppsa` scans each microbatch's backward (docs/bppsa.md): the
    sequence `G, J_{S-1}, ..., J_1` under `A <> B = B A`. This job makes
    `G`, the gradient of the loss with respect to the last stage's output,
    from that output. Its stage is the last stage.

    ```mlir
    %4 = sched.loss_grad(3, 0) from %3 on 3 duration 1
    ```
  }];
  let arguments = (ins
    NonNegI64Prop:$stage,
    NonNegI64Prop:$microbatch,
    Sched_TensorType:$input,
    OptionalProp<NonNegI64Prop>:$compute,
    OptionalProp<NonNegI64Prop>:$weights,
    OptionalProp<NonNegI64Prop>:$order,
    OptionalProp<NonNegI64Prop>:$start,
    OptionalProp<NonNegI64Prop>:$end,
    OptionalProp<NonNegI64Prop>:$duration
  );
  let results = (outs Sched_TensorType:$output);
  let builders = [
    OpBuilder<(ins "int64_t":$stage, "int64_t":$microbatch,
                   "::mlir::Value":$input), [{
      build($_builder, $_state, TensorType::get($_builder.getContext()),
            stage, microbatch, input, {}, {}, {}, {}, {}, {});
    }]>
  ];
  let assemblyFormat = [{
    `(` $stage `,` $microbatch `)` `from` $input (`on` $compute^)?
    (`weights` $weights^)? (`order` $order^)? (`duration` $duration^)?
    (`at` $start^ `to` $end)? attr-dict
  }];
}

def Sched_JacobianOp : Sched_TimedJobOp<"jacobian"> {
  let summary = "the transposed Jacobian of a stage at its input";
  let description = [{
    `J_s`, the map from the gradient of stage `s`'s output to the gradient
    of its input, evaluated at the activation its forward read (`act`, the
    output of stage `s - 1`; `s >= 1`). Element `S - s` of the scan.

    ```mlir
    %5 = sched.jacobian(2, 0) act %1 on 2 weights 2 duration 16
    ```
  }];
  let arguments = (ins
    NonNegI64Prop:$stage,
    NonNegI64Prop:$microbatch,
    Sched_TensorType:$act,
    OptionalProp<NonNegI64Prop>:$compute,
    OptionalProp<NonNegI64Prop>:$weights,
    OptionalProp<NonNegI64Prop>:$order,
    OptionalProp<NonNegI64Prop>:$start,
    OptionalProp<NonNegI64Prop>:$end,
    OptionalProp<NonNegI64Prop>:$duration
  );
  let results = (outs Sched_TensorType:$output);
  let builders = [
    OpBuilder<(ins "int64_t":$stage, "int64_t":$microbatch,
                   "::mlir::Value":$act), [{
      build($_builder, $_state, TensorType::get($_builder.getContext()),
            stage, microbatch, act, {}, {}, {}, {}, {}, {});
    }]>
  ];
  let assemblyFormat = [{
    `(` $stage `,` $microbatch `)` `act` $act (`on` $compute^)?
    (`weights` $weights^)? (`order` $order^)? (`duration` $duration^)?
    (`at` $start^ `to` $end)? attr-dict
  }];
}

def Sched_CombineOp : Sched_TimedJobOp<"combine"> {
  let summary = "one product of a scanned backward: lhs <> rhs = rhs lhs";
  let description = [{
    Joins the adjacent scan intervals of its operands into `[lo, hi]`
    (element `k` of the scan is `G` for `k = 0`, else `J_{S-k}`): `lhs`
    covers the earlier part, `rhs` the later one (the operator does not
    commute). `jv` when `lhs` starts at `G` (a Jacobian-vector product: the
    result is the gradient of the input of stage `S - hi`), `jj` otherwise
    (a Jacobian-Jacobian product). Its stage is `S - hi`, the earliest stage
    it spans.

    ```mlir
    %8 = sched.combine(2, 0) jv [0, 2] %6, %7 on 2 duration 4
    ```
  }];
  let arguments = (ins
    NonNegI64Prop:$stage,
    NonNegI64Prop:$microbatch,
    Sched_Product:$product,
    NonNegI64Prop:$lo,
    NonNegI64Prop:$hi,
    Sched_TensorType:$lhs,
    Sched_TensorType:$rhs,
    OptionalProp<NonNegI64Prop>:$compute,
    OptionalProp<NonNegI64Prop>:$weights,
    OptionalProp<NonNegI64Prop>:$order,
    OptionalProp<NonNegI64Prop>:$start,
    OptionalProp<NonNegI64Prop>:$end,
    OptionalProp<NonNegI64Prop>:$duration
  );
  let results = (outs Sched_TensorType:$output);
  let builders = [
    OpBuilder<(ins "int64_t":$stage, "int64_t":$microbatch,
                   "Product":$product, "int64_t":$lo, "int64_t":$hi,
                   "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      build($_builder, $_state, TensorType::get($_builder.getContext()),
            stage, microbatch, product, lo, hi, lhs, rhs, {}, {}, {}, {}, {},
            {});
    }]>
  ];
  let assemblyFormat = [{
    `(` $stage `,` $microbatch `)` $product ` ` `[` $lo `,` $hi `]` $lhs `,` $rhs
    (`on` $compute^)? (`weights` $weights^)? (`order` $order^)?
    (`duration` $duration^)? (`at` $start^ `to` $end)? attr-dict
  }];
}

include "Sched/SchedProgramOps.td"

#endif // PIPESCHED_SCHED_OPS_TD
