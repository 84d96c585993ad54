//===- SchedProgramOps.td - communication and rank programs -*- tablegen -*-===//
//
// What --sched-lower-ranks derives from a simulated step (transfers, weight
// fetches, gradient reductions, optimizer steps) and the program of each
// worker that holds them. These ops live only in rank programs: the worker
// is the enclosing rank and the position is the region order.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHED_PROGRAM_OPS_TD
#define PIPESCHED_SCHED_PROGRAM_OPS_TD

include "mlir/Interfaces/SideEffectInterfaces.td"

/// An op of a worker's program that is not a job.
class Sched_CommOp<string mnemonic, list<Trait> traits = []>
    : Sched_Op<mnemonic, !listconcat(traits, [
        ParentOneOf<["RankOp", "GroupOp"]>])> {
  dag placement = (ins);
  string placementFormat = "attr-dict";
  let hasVerifier = 1;
}

def Sched_SendOp : Sched_CommOp<"send"> {
  let summary = "send an activation or a gradient to another worker";
  let description = [{
    Sends `value`, the output of forward (`act`) or backward (`grad`)
    `(stage, microbatch)`, to worker `peer`. Per pair of workers, sends and
    receives match in program order (NCCL's rule); `tag` is unique per
    message and equal on both sides.

    ```mlir
    sched.send %0 act(0, 0) to 1 tag 0 bytes 4096
    ```
  }];
  let arguments = !con((ins
    Sched_TensorType:$value,
    Sched_TensorKind:$kind,
    NonNegI64Prop:$stage,
    NonNegI64Prop:$microbatch,
    NonNegI64Prop:$peer,
    TagProp:$tag,
    NonNegI64Prop:$bytes), placement);
  let assemblyFormat = "$value $kind `(` $stage `,` $microbatch `)` `to` $peer "
                       "`tag` $tag `bytes` $bytes " # placementFormat;
}

def Sched_RecvOp : Sched_CommOp<"recv"> {
  let summary = "receive an activation or a gradient from another worker";
  let description = [{
    The receiving side of a `sched.send`: its result is the tensor the peer
    sent.

    ```mlir
    %1 = sched.recv act(0, 0) from 0 tag 0 bytes 4096
    ```
  }];
  let arguments = !con((ins
    Sched_TensorKind:$kind,
    NonNegI64Prop:$stage,
    NonNegI64Prop:$microbatch,
    NonNegI64Prop:$peer,
    TagProp:$tag,
    NonNegI64Prop:$bytes), placement);
  let results = (outs Sched_TensorType:$output);
  let assemblyFormat = "$kind `(` $stage `,` $microbatch `)` `from` $peer "
                       "`tag` $tag `bytes` $bytes attr-dict";
}

def Sched_SendWeightsOp : Sched_CommOp<"send_weights"> {
  let summary = "the owner of a stage's weights sends a copy";
  let description = [{
    ```mlir
    sched.send_weights(1) to 0 tag 2 bytes 65536
    ```
  }];
  let arguments = !con((ins
    NonNegI64Prop:$stage,
    NonNegI64Prop:$peer,
    TagProp:$tag,
    NonNegI64Prop:$bytes), placement);
  let assemblyFormat = "`(` $stage `)` `to` $peer `tag` $tag `bytes` $bytes "
                       # placementFormat;
}

def Sched_FetchWeightsOp : Sched_CommOp<"fetch_weights"> {
  let summary = "fetch a copy of a stage's weights from its owner";
  let description = [{
    Where `w_compute != w_weights`: the compute worker receives the stage's
    weights ahead of the job (the prefetch depth of --sched-lower-ranks) and
    releases them after the last job of the window that uses them.

    ```mlir
    sched.fetch_weights(1) from 1 tag 2 bytes 65536
    ```
  }];
  let arguments = !con((ins
    NonNegI64Prop:$stage,
    NonNegI64Prop:$peer,
    TagProp:$tag,
    NonNegI64Prop:$bytes), placement);
  let assemblyFormat = "`(` $stage `)` `from` $peer `tag` $tag `bytes` $bytes "
                       # placementFormat;
}

def Sched_ReleaseWeightsOp : Sched_CommOp<"release_weights"> {
  let summary = "free a fetched copy of a stage's weights";
  let arguments = !con((ins NonNegI64Prop:$stage), placement);
  let assemblyFormat = "`(` $stage `)` " # placementFormat;
}

def Sched_AllReduceGradOp : Sched_CommOp<"allreduce_grad"> {
  let summary = "sum a replicated stage's weight gradients over its replicas";
  let description = [{
    Every member of `members` calls it; members that computed nothing for
    the stage contribute zeros.

    ```mlir
    sched.allreduce_grad(0) over [0, 1] bytes 65536
    ```
  }];
  let arguments = !con((ins
    NonNegI64Prop:$stage,
    DenseI64ArrayAttr:$members,
    NonNegI64Prop:$bytes), placement);
  let assemblyFormat = "`(` $stage `)` `over` $members `bytes` $bytes "
                       # placementFormat;
}

def Sched_ReduceGradOp : Sched_CommOp<"reduce_grad"> {
  let summary = "sum a sharded stage's weight gradients onto its owner";
  let description = [{
    ```mlir
    sched.reduce_grad(1) to 1 over [0, 1] bytes 65536
    ```
  }];
  let arguments = !con((ins
    NonNegI64Prop:$stage,
    NonNegI64Prop:$root,
    DenseI64ArrayAttr:$members,
    NonNegI64Prop:$bytes), placement);
  let assemblyFormat = "`(` $stage `)` `to` $root `over` $members `bytes` "
                       "$bytes " # placementFormat;
}

def Sched_TiedGradOp : Sched_CommOp<"tied_grad"> {
  let summary = "sum a tied weight's gradient over the owners of its group";
  let description = [{
    `(g)` is the index of a group of the program's `tied` stages, which
    share one weight tensor. Every member calls it after the gradient
    reductions of the group's stages and before their optimizer steps. The
    lowest member that owns a stage of the group contributes that stage's
    gradient of the tensor; the sum over the members (the tensor's whole
    gradient: every use, every microbatch) replaces the gradient of the
    tensor in every stage of the group that the member owns. With one
    member (a rank that owns every stage of the group, as in DDP) the sum is
    local.

    ```mlir
    sched.tied_grad(0) over [0, 3] bytes 65536
    ```
  }];
  let arguments = !con((ins
    NonNegI64Prop:$tie,
    DenseI64ArrayAttr:$members,
    NonNegI64Prop:$bytes), placement);
  let assemblyFormat = "`(` $tie `)` `over` $members `bytes` $bytes "
                       # placementFormat;
}

def Sched_OptimizerStepOp : Sched_CommOp<"optimizer_step"> {
  let summary = "apply the optimizer to a stage's weights on an owner";
  let arguments = !con((ins NonNegI64Prop:$stage), placement);
  let assemblyFormat = "`(` $stage `)` " # placementFormat;
}

def Sched_YieldOp : Sched_Op<"yield", [Pure, Terminator, HasParent<"GroupOp">]> {
  let summary = "the values a group's receives make available after it";
  let arguments = (ins Variadic<Sched_TensorType>:$values);
  let builders = [OpBuilder<(ins), [{ /* yields nothing */ }]>];
  let assemblyFormat = "($values^)? attr-dict";
}

def Sched_GroupOp : Sched_Op<"group", [
    HasParent<"RankOp">, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "communication posted and completed together";
  let description = [{
    Like `ncclGroupStart/End`: the sends and receives inside are posted
    together and the group completes when all of them have; a worker that
    sends and receives at the same point cannot block on its own send. The
    received tensors are the group's results.

    ```mlir
    %1 = sched.group -> !sched.tensor {
      sched.send %0 act(0, 0) to 1 tag 0 bytes 0
      %2 = sched.recv grad(1, 0) from 1 tag 1 bytes 0
      sched.yield %2
    }
    ```
  }];
  let results = (outs Variadic<Sched_TensorType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "(`->` type($results)^)? $body attr-dict";
  let hasVerifier = 1;
}

def Sched_RankOp : Sched_Op<"rank", [
    HasParent<"ProgramOp">, IsolatedFromAbove, NoTerminator, SingleBlock]> {
  let summary = "the static program of one worker";
  let description = [{
    A `sched.program` holds one `sched.rank` per worker, in rank order; each
    holds its ops in execution order. `owns` lists the stages whose weights
    the rank keeps for the whole run.
  }];
  let arguments = (ins NonNegI64Prop:$rank, DenseI64ArrayAttr:$owns);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$rank `owns` $owns attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Sched_ProgramOp : Sched_Op<"program", [
    IsolatedFromAbove, NoTerminator, SingleBlock, Symbol]> {
  let summary = "the rank programs of one training step";
  let description = [{
    What `--sched-lower-ranks` makes of a simulated `sched.step`: one
    `sched.rank` per worker, in rank order, and what every rank needs to
    know of the step (its shape, stage graph, cost model and the step's
    `layers` per stage when it has them; `makespan` is
    the simulated step time, `replayed` the time of these rank programs
    replayed with rendezvous transfers, lib/Scheduling/ProgramReplay). Every job of the step runs on exactly one
    rank, unless the program is `partial` (a fragment, as in tests). A verifier knows what may appear where: jobs
    and the job graph in a step, communication only in rank programs.

    ```mlir
    sched.program stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 2> makespan 3 {
      sched.rank 0 owns [0] {
        %0 = sched.forward(0, 0) weights 0 at 0 to 1
        %1 = sched.backward(0, 0) grad %0 weights 0 at 1 to 3
        sched.optimizer_step(0)
      }
    }
    ```
  }];
  let arguments = (ins
    PositiveI64Prop:$stages,
    PositiveI64Prop:$microbatches,
    PositiveI64Prop:$workers,
    OptionalAttr<Sched_StageGraphAttr>:$stage_graph,
    OptionalAttr<Sched_TiedAttr>:$tied,
    Sched_CostAttr:$cost,
    OptionalAttr<DenseI64ArrayAttr>:$layers,
    NonNegI64Prop:$makespan,
    OptionalAttr<I64Attr>:$replayed,
    UnitAttr:$partial,
    OptionalAttr<SymbolNameAttr>:$sym_name
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    ($sym_name^)? `stages` `=` $stages `,` `microbatches` `=` $microbatches `,`
    `workers` `=` $workers (`graph` $stage_graph^)? (`tied` $tied^)? `cost` $cost
    (`layers` $layers^)?
    `makespan` $makespan (`replayed` $replayed^)? (`partial` $partial^)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// A program is named when its step was (the step's symbol name).
    bool isOptionalSymbol() { return true; }
    /// The stages whose forwards feed stage `s`.
    void getStagePreds(int64_t s, ::llvm::SmallVectorImpl<int64_t> &preds) {
      stagePreds(getStageGraphAttr(), getStages(), s, preds);
    }
    /// The stages that stage `s` feeds.
    void getStageSuccs(int64_t s, ::llvm::SmallVectorImpl<int64_t> &succs) {
      stageSuccs(getStageGraphAttr(), getStages(), s, succs);
    }
  }];
}

#endif // PIPESCHED_SCHED_PROGRAM_OPS_TD
