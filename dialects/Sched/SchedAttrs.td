//===- SchedAttrs.td - sched dialect attributes -------------*- tablegen -*-===//

#ifndef PIPESCHED_SCHED_ATTRS_TD
#define PIPESCHED_SCHED_ATTRS_TD

include "Sched/SchedDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Sched_Direction : I32EnumAttr<"Direction", "direction of a job", [
    I32EnumAttrCase<"Forward", 0, "fwd">,
    I32EnumAttrCase<"Backward", 1, "bwd">,
    I32EnumAttrCase<"BackwardWeight", 2, "bwd_w">,
    I32EnumAttrCase<"Scan", 3, "scan">
  ]> {
  let cppNamespace = "::pipesched::sched";
  let genSpecializedAttr = 0;
}
def Sched_DirectionAttr : EnumAttr<Sched_Dialect, Sched_Direction, "direction">;

def Sched_TensorKind : I32EnumAttr<"TensorKind",
    "what a point-to-point transfer carries", [
    I32EnumAttrCase<"Activation", 0, "act">,
    I32EnumAttrCase<"Gradient", 1, "grad">,
    I32EnumAttrCase<"Scan", 2, "scan">
  ]> {
  let cppNamespace = "::pipesched::sched";
}

def Sched_Product : I32EnumAttr<"Product",
    "the kind of a BPPSA combine", [
    I32EnumAttrCase<"JV", 0, "jv">,
    I32EnumAttrCase<"JJ", 1, "jj">
  ]> {
  let cppNamespace = "::pipesched::sched";
}

class Sched_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Sched_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Sched_CostAttr : Sched_Attr<"Cost", "cost"> {
  let summary = "durations and sizes of the jobs of a step";
  let description = [{
    Durations in abstract units per stage (`fwd`, `bwd`, and `bwd_w` once the
    backward is split into input- and weight-gradient parts) and sizes in
    bytes of one microbatch's activation at a stage boundary (`act`) and of
    one stage's weights (`weights`). A scalar applies to every stage; a list
    gives one value per stage. `fwd_bwd` is the duration of an overlapped
    forward-backward pair (DualPipe's F&B), by the forward's stage.

    ```mlir
    #sched.cost<fwd = 1, bwd = 2>
    #sched.cost<fwd = [1, 1, 2], bwd = [2, 2, 4], act = 4096, weights = 65536>
    ```

    The defaults (`fwd = 1, bwd = 2`) follow the seed's simulator: one unit
    of the seed's Table 1 (forward + backward of a stage) is 3 ticks.

    With a split backward, `act_w` is the part of `act` that the weight
    half still needs after the input half (the Zero Bubble paper's M_W
    against M_B): the input half frees `act - act_w`, the weight half the
    rest. Without it the whole activation lives until the weight half.

    ```mlir
    #sched.cost<fwd = 1, bwd = 1, bwd_w = 1, act = 1000, act_w = 400>
    ```

    `transfer` is the time to move one tensor (an activation or a gradient)
    between workers; `--sched-simulate` adds it to an input made on another
    worker unless its `transfer-time` option says otherwise. `unit` gives
    the ticks a real length (`ns`, `us` or `ms`), so that `--sched-stats`
    predicts a step time; without it durations are abstract ticks.

    The replay of the rank programs (lib/Scheduling/ProgramReplay) also
    times every message by its size, `latency + bytes / bandwidth`
    (`latency` in ticks, `bandwidth` in bytes per second, which needs a
    `unit`), a gradient all-reduce as `reduce` (the measured all-reduce of
    one stage's `weights`, scaled by size; without it, a ring over the
    link), and each stage's `optimizer` step. A calibrated cost (`--sched-calibrate`,
    docs/calibration.md) has them all:

    ```mlir
    #sched.cost<fwd = [41200, 40800], bwd = [85300, 84900], act = 2048, optimizer = [900, 880], transfer = 6100, latency = 5800, bandwidth = 6800000000, unit = ns>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "forward duration per stage">:$fwd,
    ArrayRefParameter<"int64_t", "backward duration per stage">:$bwd,
    ArrayRefParameter<"int64_t", "weight-gradient duration per stage">:$bwdWeight,
    "int64_t":$actBytes,
    "int64_t":$weightBytes,
    ArrayRefParameter<"int64_t", "overlapped F&B pair duration per stage">:$fwdBwd,
    "int64_t":$transfer,
    "int64_t":$tickNs,
    "int64_t":$latency,
    "int64_t":$bandwidth,
    ArrayRefParameter<"int64_t", "optimizer step duration per stage">:$optimizer,
    "int64_t":$reduce,
    "int64_t":$actWBytes
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Duration of a job of direction `d` at `stage` (0 for `bwd_w` when the
    /// backward is not split, and for a scan job, which carries its own).
    int64_t getDuration(int64_t stage, Direction d) const;
    /// Whether the backward is split into `bwd` (input) and `bwd_w` (weights).
    bool isSplitBackward() const { return !getBwdWeight().empty(); }
    static CostAttr getDefault(::mlir::MLIRContext *ctx);
    /// Whether ticks have a real length (`unit`).
    bool hasTimeUnit() const { return getTickNs() > 0; }
    /// The bytes of a microbatch's activation that the weight half keeps
    /// after the backward's input half (`act_w`; without it, all of `act`).
    int64_t getWeightHalfActBytes() const {
      return getActWBytes() < 0 ? getActBytes() : getActWBytes();
    }
    /// Whether the input half frees a part of the activation (`act_w`
    /// below `act`), as the Zero Bubble paper models memory.
    bool hasActivationParts() const {
      return getWeightHalfActBytes() < getActBytes();
    }
    /// The optimizer step of `stage` (0 without `optimizer`).
    int64_t getOptimizerDuration(int64_t stage) const {
      ::llvm::ArrayRef<int64_t> v = getOptimizer();
      return v.empty() ? 0 : v.size() == 1 ? v.front() : v[stage];
    }
    /// `ticks` in milliseconds (0 without a unit).
    double toMilliseconds(int64_t ticks) const {
      return double(ticks) * double(getTickNs()) / 1e6;
    }
    /// Duration of an overlapped pair: the forward of `forwardStage` fused
    /// with the backward (and weight half) of `backwardStage`; without
    /// `fwd_bwd`, the two one after the other.
    int64_t getOverlapDuration(int64_t forwardStage, int64_t backwardStage) const;
  }];
}

def Sched_StageGraphAttr : Sched_Attr<"StageGraph", "stage_graph"> {
  let summary = "a DAG of stages (several encoder legs, skip connections)";
  let description = [{
    Edges `src -> dst` between stages: the forward of `dst` consumes the
    outputs of the forwards of all its sources (in the order listed), and
    the backward of `src` consumes the gradients of all its destinations.
    A stage without destinations computes a loss. Edges go from a lower to
    a higher stage index, so stage order is a topological order. Without a
    stage graph a step is the chain `0 -> 1 -> ... -> S-1`.

    ```mlir
    // Two encoder legs (stages 0 and 1) feeding a decoder (stage 2).
    #sched.stage_graph<0 -> 2, 1 -> 2>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "edge sources">:$sources,
    ArrayRefParameter<"int64_t", "edge destinations">:$targets
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Sched_TiedAttr : Sched_Attr<"Tied", "tied"> {
  let summary = "groups of stages that share one weight tensor";
  let description = [{
    Each group lists stages that hold one weight tensor together (Megatron's
    embedding group: the input embedding of the first stage and the output
    head of the last; DeepSpeed's tied modules). `--sched-lower-ranks` sums
    the tensor's gradient over the group's owners before their optimizer
    steps (`sched.tied_grad`), so every copy applies the same update. In the
    runtime's built-in MLP the tied tensor is the weight matrix (H x H, not
    the bias) of the first Linear layer of the group's lowest stage and of
    the last Linear layer of each of its other stages.

    ```mlir
    #sched.tied<[0, 3], [1, 2]>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "the groups' stages, one group after another">:$stages,
    ArrayRefParameter<"int64_t", "the number of stages of each group">:$sizes
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The groups, each a slice of getStages().
    ::llvm::SmallVector<::llvm::ArrayRef<int64_t>> getGroups() const;
  }];
}

//===----------------------------------------------------------------------===//
// Priorities and memory caps
//===----------------------------------------------------------------------===//

def Sched_PriorityPolicy : I32EnumAttr<"PriorityPolicy",
    "a named priority: a lexicographic key, or a static order", [
    I32EnumAttrCase<"FillDrain", 0, "fill_drain">,
    I32EnumAttrCase<"BackwardFirst", 1, "backward_first">,
    I32EnumAttrCase<"DepthFirst", 2, "depth_first">,
    I32EnumAttrCase<"BreadthFirst", 3, "breadth_first">,
    I32EnumAttrCase<"Interleaved", 4, "interleaved">,
    I32EnumAttrCase<"LoopedBFS", 5, "looped_bfs">,
    I32EnumAttrCase<"ZeroBubbleH1", 6, "zb_h1">,
    I32EnumAttrCase<"ZeroBubbleV", 7, "zbv">,
    I32EnumAttrCase<"DualPipeV", 8, "dualpipev">,
    I32EnumAttrCase<"ZeroBubbleH2", 9, "zb_h2">,
    I32EnumAttrCase<"VMin", 10, "v_min">,
    I32EnumAttrCase<"VHalf", 11, "v_half">
  ]> {
  let cppNamespace = "::pipesched::sched";
  let genSpecializedAttr = 0;
}
def Sched_PriorityPolicyAttr
    : EnumAttr<Sched_Dialect, Sched_PriorityPolicy, "priority"> {
  let assemblyFormat = "`<` $value `>`";
}

// The priority of a step: a named policy, or a lexicographic key written as
// an affine map over (s, b, d) or (s, b, d, p).
def Sched_PriorityAttr : AnyAttrOf<[Sched_PriorityPolicyAttr, AffineMapAttr]>;

def Sched_MemoryCapAttr : Sched_Attr<"MemoryCap", "memory_cap"> {
  let summary = "a cap on the live activations of each worker";
  let description = [{
    The most activations a worker keeps live at once, counted in
    (stage, microbatch) activations (`units`) or in bytes (`bytes`, with the
    cost's `act` size). A scalar applies to every worker; a list gives one
    value per worker. `none` states that there is no cap, so a strategy does
    not fill in its own. A worker with a cap does not start a forward while
    the forward would exceed it: it runs another ready job or waits.

    ```mlir
    #sched.memory_cap<units = [4, 3, 2, 1]>
    #sched.memory_cap<bytes = 1048576>
    #sched.memory_cap<none>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "cap per worker (one value: every worker)">:$limits,
    "bool":$inBytes
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether the attribute states that there is no cap.
    bool isNone() const { return getLimits().empty(); }
    /// The cap of each of `workers` workers (empty when none).
    ::llvm::SmallVector<int64_t> perWorker(int64_t workers) const;
  }];
}

def Sched_NodesAttr : Sched_Attr<"Nodes", "nodes"> {
  let summary = "which workers share a node, and the link between nodes";
  let description = [{
    Workers grouped into nodes: `size` workers per node in rank order
    (worker `w` on node `w floordiv size`), or an explicit node per worker
    (`map`, one value per worker). Inside a node workers talk over the
    cost's link (`transfer`, `latency`, `bandwidth`); between nodes over the
    link given here (`transfer` in ticks per tensor, `latency` in ticks,
    `bandwidth` in bytes per second), each defaulting to the cost's.

    ```mlir
    #sched.nodes<size = 4, transfer = 12>
    #sched.nodes<map = [0, 1, 0, 1], transfer = 12, latency = 9000, bandwidth = 12500000000>
    ```
  }];
  let parameters = (ins
    "int64_t":$size,
    ArrayRefParameter<"int64_t", "node of each worker">:$map,
    "int64_t":$transfer,
    "int64_t":$latency,
    "int64_t":$bandwidth
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The node of each of `workers` workers.
    std::vector<int64_t> nodeOfWorkers(int64_t workers) const;
    /// The time to move one tensor between nodes: `transfer`, else
    /// `intraNode` (the cost's).
    int64_t getInterNodeTransfer(int64_t intraNode) const {
      return getTransfer() < 0 ? intraNode : getTransfer();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Named strategies
//===----------------------------------------------------------------------===//

def Sched_StrategyAttrInterface : AttrInterface<"StrategyAttrInterface"> {
  let cppNamespace = "::pipesched::sched";
  let description = [{
    A named training scheme: it expands to the placement maps `w_compute`
    and `w_weights` over `(s, b, d)` and a default priority policy, for a
    given shape (S stages, B microbatches, W workers), once its constraints
    on that shape hold.
  }];
  let methods = [
    InterfaceMethod<"Checks the strategy's constraints on a shape.",
      "::llvm::LogicalResult", "verifyShape",
      (ins "int64_t":$stages, "int64_t":$microbatches, "int64_t":$workers,
           "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError)>,
    InterfaceMethod<"`w_compute(s, b, d)` for a shape that verified.",
      "::mlir::AffineMap", "getComputeMap",
      (ins "int64_t":$stages, "int64_t":$microbatches, "int64_t":$workers)>,
    InterfaceMethod<"`w_weights(s, b, d)` for a shape that verified.",
      "::mlir::AffineMap", "getWeightsMap",
      (ins "int64_t":$stages, "int64_t":$microbatches, "int64_t":$workers)>,
    InterfaceMethod<"The priority policy the scheme uses by default.",
      "::pipesched::sched::PriorityPolicy", "getDefaultPriority", (ins)>,
    InterfaceMethod<[{
        Microbatches per round of the scheme's interleaved order, or 0 for
        one round per W microbatches (Megatron's default).
      }],
      "int64_t", "getMicrobatchGroup",
      (ins "int64_t":$stages, "int64_t":$microbatches, "int64_t":$workers),
      [{}], [{ return 0; }]>,
    InterfaceMethod<[{
        The scheme's cap on the live activations of a worker under its
        default priority, counted in (stage, microbatch) activations, or -1
        for none. 1F1B keeps at most `S - s` microbatches live on stage `s`.
        `--sched-expand` writes it into the step as `cap`.
      }],
      "int64_t", "getMemoryCap",
      (ins "int64_t":$stages, "int64_t":$microbatches, "int64_t":$workers,
           "int64_t":$worker),
      [{}], [{ return -1; }]>,
  ];
}

class Sched_StrategyAttr<string name, string attrMnemonic,
                         list<string> overrides = []>
    : Sched_Attr<name, attrMnemonic,
        [DeclareAttrInterfaceMethods<Sched_StrategyAttrInterface, overrides>]>;

def Sched_DdpAttr : Sched_StrategyAttr<"Ddp", "ddp"> {
  let summary = "distributed data parallel: w = (b mod W, b mod W)";
  let description = [{
    Each worker runs whole microbatches with a full replica of the weights.
    The seed asks `W = B`; `B` a multiple of `W` is gradient accumulation.
  }];
}

def Sched_FsdpAttr : Sched_StrategyAttr<"Fsdp", "fsdp"> {
  let summary = "fully sharded data parallel: compute b mod W, weights s mod W";
  let description = [{
    Like DDP, but stage `s`'s weights live on worker `s mod W` and are
    fetched by the workers that need them. `B` a multiple of `W`.
  }];
}

def Sched_GpipeAttr : Sched_StrategyAttr<"Gpipe", "gpipe"> {
  let summary = "GPipe: stage s on worker s floordiv (S/W), fill-drain";
  let description = [{
    Pipeline parallelism with consecutive stages per worker (`S` a multiple
    of `W`; the seed's `W = S` is one stage per worker).
  }];
}

def Sched_OneFOneBAttr
    : Sched_StrategyAttr<"OneFOneB", "1f1b", ["getMemoryCap"]> {
  let summary = "1F1B (PipeDream-flush): GPipe's placement, backward first";
  let description = [{
    The same placement as `gpipe` with a backward-first priority and at most
    `S - s` live microbatches on stage `s` (warm-up of `S-1-s` forwards).
  }];
}

def Sched_Interleaved1F1BAttr
    : Sched_StrategyAttr<"Interleaved1F1B", "interleaved_1f1b",
                         ["getMicrobatchGroup"]> {
  let summary = "interleaved 1F1B (Megatron, torch): stage s on worker s mod W";
  let description = [{
    `v` chunks (virtual stages) per worker: `S = v * W`, stage `s` on worker
    `s mod W`, in the static order `<interleaved>`. Any `B`: microbatches go
    through the chunks in rounds of `group`:

    - `group = megatron` (the default): rounds of `W`, the last one possibly
      short (Megatron-core's `microbatch_group_size_per_vp_stage = p`);
    - `group = torch`: torch's `Interleaved1F1B`, `B / max(1, B / W)`
      microbatches per round (`B` a multiple of the number of rounds);
    - `group = N`: rounds of `N`.

    ```mlir
    #sched.interleaved_1f1b<chunks = 2>
    #sched.interleaved_1f1b<chunks = 2, group = torch>
    ```
  }];
  let parameters = (ins "int64_t":$chunks,
                        DefaultValuedParameter<"int64_t", "0">:$group);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// `group` values that name a rule rather than a size.
    static constexpr int64_t kMegatronGroup = 0, kTorchGroup = -1;
  }];
}

def Sched_LppAttr : Sched_StrategyAttr<"Lpp", "lpp"> {
  let summary = "looped pipeline: w = (h(s,b), h(s,b)), h = R*(b mod G) + s mod R";
  let description = [{
    `G` groups of `R` workers (`W = G * R`); each group runs a pipeline of
    its microbatches, looping over the `S` stages `R` at a time (`R` divides
    `S`). `G = 1, R = S` is GPipe; `G = W = B, R = 1` is DDP.
  }];
  let parameters = (ins "int64_t":$groups, "int64_t":$ring);
  let assemblyFormat = "`<` `groups` `=` $groups `,` `ring` `=` $ring `>`";
  let genVerifyDecl = 1;
}

def Sched_FslppAttr : Sched_StrategyAttr<"Fslpp", "fslpp"> {
  let summary = "fully sharded looped pipeline: compute h(s,b), weights h(s,s)";
  let description = [{
    LPP's compute map with weights sharded by stage: `w_weights = h(s, s)`.
    The seed prints the pair swapped; its text (weights use the stage id)
    is the right reading.
  }];
  let parameters = (ins "int64_t":$groups, "int64_t":$ring);
  let assemblyFormat = "`<` `groups` `=` $groups `,` `ring` `=` $ring `>`";
  let genVerifyDecl = 1;
}

def Sched_LoopedBfsAttr : Sched_StrategyAttr<"LoopedBfs", "looped_bfs"> {
  let summary = "torch's looped BFS: stage s on worker s mod W, breadth first";
  let description = [{
    `S = chunks * W`, stage `s` on worker `s mod W`, in the static order
    `<looped_bfs>` (torch `ScheduleLoopedBFS`): each worker runs every
    forward of its lowest stage, then of its next, and then the backwards
    from its highest stage down, microbatches in reverse order.

    ```mlir
    #sched.looped_bfs<chunks = 2>
    ```
  }];
  let parameters = (ins "int64_t":$chunks);
  let assemblyFormat = "`<` `chunks` `=` $chunks `>`";
  let genVerifyDecl = 1;
}

def Sched_ZbH1Attr
    : Sched_StrategyAttr<"ZbH1", "zb_h1", ["getMicrobatchGroup"]> {
  let summary = "zero bubble ZB-H1: 1F1B with deferred weight gradients";
  let description = [{
    The zero-bubble schedule with 1F1B's memory (Qi et al., ICLR 2024), as
    torch's `ScheduleInterleavedZeroBubble` generates it: stage `s` on
    worker `s mod W`, `S = chunks * W` (`chunks = 1`, the default, is
    ZB-H1 proper), in the static order `<zb_h1>`. Needs a split backward
    (a cost with `bwd_w`); microbatches in torch's rounds of
    `B / max(1, B / W)`.

    ```mlir
    #sched.zb_h1
    #sched.zb_h1<chunks = 2>
    ```
  }];
  let parameters = (ins DefaultValuedParameter<"int64_t", "1">:$chunks);
  let assemblyFormat = "(`<` `chunks` `=` $chunks^ `>`)?";
  let genVerifyDecl = 1;
}

def Sched_ZbH2Attr : Sched_StrategyAttr<"ZbH2", "zb_h2"> {
  let summary = "zero bubble ZB-H2: up to 2p live activations, no bubble";
  let description = [{
    The Zero Bubble repository's ZB-2p (`--zero-bubble-max-pending-backward
    2p`): one stage per worker (`S = W`), its greedy scheduler with at most
    `2W` live activations per rank and the step's costs, in the static
    order `<zb_h2>`. Needs a split backward (a cost with `bwd_w`).
  }];
}

def Sched_ZbvAttr : Sched_StrategyAttr<"Zbv", "zbv"> {
  let summary = "zero bubble ZB-V: 2W stages in a V";
  let description = [{
    torch's `ScheduleZBVZeroBubble`: `S = 2W`, worker `r` holds stages `r`
    and `2W-1-r` (the forward goes down the workers and back up), in the
    static order `<zbv>`. Needs a split backward (a cost with `bwd_w`).
  }];
}

def Sched_VMinAttr : Sched_StrategyAttr<"VMin", "v_min"> {
  let summary = "V-Min: the V with about a third of 1F1B's activations";
  let description = [{
    The controllable-memory V schedule V-Min (Qi et al., NeurIPS 2024) as
    the Zero Bubble repository builds it: `S = 2W`, worker `r` holds stages
    `r` and `2W-1-r`, in the static order `<v_min>`, at most
    `2 ((p+4) floordiv 3)` live stage activations per rank. Needs a split
    backward.
  }];
}

def Sched_VHalfAttr : Sched_StrategyAttr<"VHalf", "v_half"> {
  let summary = "V-Half: the V with half of 1F1B's activations";
  let description = [{
    V-Half (Qi et al., NeurIPS 2024): the V placement of `v_min`, in the
    static order `<v_half>`, at most `2 ((p+2) floordiv 2)` live stage
    activations per rank. Needs a split backward.
  }];
}

def Sched_DualPipeVAttr : Sched_StrategyAttr<"DualPipeV", "dualpipev"> {
  let summary = "DualPipeV: the V with overlapped forward-backward pairs";
  let description = [{
    DeepSeek's DualPipeV as torch's `ScheduleDualPipeV` generates it:
    `S = 2W`, worker `r` holds stages `r` and `2W-1-r`, in the static order
    `<dualpipev>`: in the steady state each forward of one stage runs
    overlapped with a whole backward of the other (`overlapped` forwards,
    the cost's `fwd_bwd`), and the drain splits backwards into input and
    weight halves. Needs a split backward (a cost with `bwd_w`) and
    `B >= 2W`.
  }];
}

#endif // PIPESCHED_SCHED_ATTRS_TD
