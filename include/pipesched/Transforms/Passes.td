//===- Passes.td - pipesched passes -------------------------*- tablegen -*-===//

#ifndef PIPESCHED_TRANSFORMS_PASSES_TD
#define PIPESCHED_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SchedExpand : Pass<"sched-expand", "::pipesched::sched::StepOp"> {
  let summary = "Materialize the job graph of a step spec";
  let description = [{
    Turns a `sched.step` whose body is empty into the full graph of `2*S*B`
    jobs with their SSA edges: `(s, b, F)` consumes the output of
    `(s-1, b, F)`; `(s, b, B)` consumes the gradient of `(s+1, b, B)` (the
    output of `(S-1, b, F)` at the last stage) and the activation of
    `(s-1, b, F)`. Jobs are listed microbatch by microbatch, each forward
    chain followed by its backward chain. A step that already holds jobs is
    left alone. With a split backward (cost `bwd_w`) each backward is
    followed by its `sched.backward_weight`. Linear in the number of jobs.
    A step larger than `max-jobs` is refused rather than exhausting memory.
    A job costs about 1.7 KiB through the whole lowering (measured: 131,072
    jobs, 225 MiB peak for spec to program JSON), so the default of 2^22
    (4.2 M jobs) needs about 7 GiB; raise it on bigger machines.

    A step with a strategy that keeps the strategy's priority and states no
    `cap` gets the strategy's memory cap written in (`cap <units = ...>`,
    1F1B: `S/W * (W - w)` on worker `w`), so the IR shows every constraint
    the simulator applies.
  }];
  let options = [
    Option<"maxJobs", "max-jobs", "int64_t", /*default=*/"int64_t(1) << 22",
           "Refuse to expand a step into more jobs than this">,
  ];
  let dependentDialects = ["::pipesched::sched::SchedDialect"];
}

def SchedPlace : Pass<"sched-place", "::pipesched::sched::StepOp"> {
  let summary = "Evaluate the placement maps on every job";
  let description = [{
    Resolves the step's scheme (a named strategy and/or explicit `compute` /
    `weights` maps over `(s, b, d)`) and sets `on` (`w_compute`) and
    `weights` (`w_weights`) on every job that does not already carry them:
    a placement written by hand wins. A worker outside `[0, W)` is an error
    that names the job. Linear in the number of jobs; maps are evaluated
    directly, without creating attributes per job.

    When the step's priority is a static order (`<interleaved>` and the
    other generators of `lib/Scheduling/Priorities.h`), every job without
    an `order` gets its position in its worker's sequence: each worker's
    jobs sorted by their position in the generator's sequence, so a
    placement equal to the generator's replays it exactly.
  }];
  let dependentDialects = ["::pipesched::sched::SchedDialect"];
}

def SchedCalibrate : Pass<"sched-calibrate", "::pipesched::sched::StepOp"> {
  let summary = "Give a step the costs measured on a machine";
  let description = [{
    Reads a cost file (`pipeline-run --profile FILE`, format
    `pipesched-costs`, docs/calibration.md) and replaces the step's
    `#sched.cost` with it in nanoseconds: per-stage `fwd`, `bwd` (and
    `bwd_w` when the step splits its backward), `act`, `weights`, the
    measured `optimizer` steps, the link (`latency`, `bandwidth = 1e9 /
    per_byte` bytes per second), a `transfer` of one activation (`latency +
    per_byte * act`) and `unit = ns`. `--sched-simulate` then times the schedule in nanoseconds
    and `--sched-stats` predicts the step time in milliseconds.

    The file must list one entry per stage of the step. A measured whole
    backward cannot be split: a step that splits its backward needs a file
    measured on a split program. A measured split backward is summed for a
    step that does not split. Overlapped pairs (`fwd_bwd`) take the sum of
    their parts. Refuses a scanned step (BPPSA's jobs carry their own
    durations).

    ```
    pipeline-opt --sched-calibrate=costs=costs.json --pipeline-schedule \
      --sched-stats spec.mlir
    ```
  }];
  let options = [
    Option<"costs", "costs", "std::string", /*default=*/"",
           "The cost file (pipeline-run --profile)">,
  ];
  let dependentDialects = ["::pipesched::sched::SchedDialect"];
}

def SchedPartition : Pass<"sched-partition", "::pipesched::sched::StepOp"> {
  let summary = "Group a model's layers into the step's stages";
  let description = [{
    PipeDream's partitioning (docs/partition.md): reads a layer file
    (`{"layers": [{"name": ..., "fwd": ..., "bwd": ..., "act": ...,
    "weights": ...}, ...]}`, durations in the step's ticks, sizes in
    bytes), splits the chain of layers into the step's `S` stages of
    consecutive layers with the least bottleneck (the slowest stage's
    forward + backward + weight gradient) such that every stage fits
    `memory-limit-bytes` under 1F1B's memory model (its weights plus
    `min(S - s, B)` inputs on stage `s`), then rewrites the step's cost with
    the stages' summed `fwd`, `bwd` (and `bwd_w` when the step splits its
    backward), `act` and `weights` the largest over the stages, and records
    the partition as the step's `layers` (the layer count per stage), which
    lowering carries into the program for `pipeline-run`. The cost's
    other fields (`transfer`, `unit`, the link, a scalar `optimizer`,
    `reduce`) are kept. A thin adapter over
    `lib/Scheduling/Partition` (`PartitionProblem::check()` before,
    `Partition::verify()` after).

    Refused, naming the file and the reason: a step that is not a spec or
    has a stage graph; an unreadable file, invalid JSON, a missing, unknown
    or mistyped field, a negative number or one of 2^53 or more (naming the
    layer by index); no layer; more stages than layers; a memory limit no
    partition fits (naming the stage that cannot fit); a step that splits
    its backward with layers that do not; a cost with per-stage figures
    the layers cannot give (`fwd_bwd`, a list of `optimizer` steps).

    ```
    pipeline-opt --sched-partition="layers=model.json memory-limit-bytes=N" \
      --pipeline-schedule --sched-stats spec.mlir
    ```
  }];
  let options = [
    Option<"layers", "layers", "std::string", /*default=*/"",
           "The layer file (docs/partition.md)">,
    Option<"memoryLimitBytes", "memory-limit-bytes", "int64_t",
           /*default=*/"0",
           "Bytes per stage: weights + min(S - s, B) input activations; "
           "0 = no limit">,
    Option<"partition", "partition", "::pipesched::scheduling::PartitionMethod",
           /*default=*/"::pipesched::scheduling::PartitionMethod::Optimal",
           "How to split the layers", [{::llvm::cl::values(
             clEnumValN(::pipesched::scheduling::PartitionMethod::Optimal, "optimal",
                        "the least bottleneck (dynamic program)"),
             clEnumValN(::pipesched::scheduling::PartitionMethod::Uniform, "uniform",
                        "equal layer counts, for comparison"))}]>,
  ];
  let dependentDialects = ["::pipesched::sched::SchedDialect"];
}

def SchedSimulate : Pass<"sched-simulate", "::pipesched::sched::StepOp"> {
  let summary = "Simulate a placed step and order every worker's jobs";
  let description = [{
    Runs the event-driven list scheduler (`lib/Scheduling`) on a placed
    step: a worker runs one job at a time; a job starts when its inputs are
    there (plus `transfer-time` for an input made on another worker) and its
    worker is free; among ready jobs the worker picks the smallest priority
    `n(s, b, d)`: the step's key compared lexicographically. Durations come
    from the cost model. A forward keeps its input activation live until its
    backward (its weight-gradient job with a split backward) finishes; the
    step's `cap` (or the options below) defers forwards. Stamps every job with `order` (its position in
    its worker's program) and `at start to end`.

    A step whose jobs all carry `order` (an imported schedule) is replayed
    in that order unless `reorder` is set.
  }];
  let options = [
    Option<"transferTime", "transfer-time", "int64_t", /*default=*/"-1",
           "Time added to an input made on another worker; -1 = the "
           "cost's `transfer` (0 without one)">,
    Option<"memoryCap", "memory-cap", "int64_t", /*default=*/"0",
           "Cap on live activations per worker, in (stage, microbatch) "
           "activations; 0 = the step's `cap`, if any">,
    Option<"memoryCapBytes", "memory-cap-bytes", "int64_t", /*default=*/"0",
           "Cap on live activation bytes per worker (cost 'act' per "
           "activation); 0 = none">,
    Option<"noMemoryCap", "no-memory-cap", "bool", /*default=*/"false",
           "Ignore the step's `cap`">,
    Option<"reorder", "reorder", "bool", /*default=*/"false",
           "Schedule by priority even if every job already has an order">,
  ];
  let dependentDialects = ["::pipesched::sched::SchedDialect"];
}

def SchedBppsa : Pass<"sched-bppsa", "::pipesched::sched::StepOp"> {
  let summary = "Scan each microbatch's backward in parallel (BPPSA)";
  let description = [{
    BPPSA (Wang, Bai, Pekhimenko, MLSys 2020; docs/bppsa.md): on a placed
    step over a chain of stages, replaces each microbatch's chain of
    backwards (and weight halves) by a Blelloch scan of `G, J_{S-1}, ...,
    J_1` under `A <> B = B A`: a `sched.loss_grad`, a `sched.jacobian` per
    stage `s >= 1`, the `sched.combine` products of the up-sweep and the
    down-sweep (`2 ceil(log2 S)` steps instead of `S - 1`), then one
    `sched.backward_weight` per stage that reads its output's gradient and
    its activation. Jacobians and weight gradients run where the stage's
    backward was placed (its weights stay with their owner); combines per
    `placement`. Every new job carries its `duration` from the cost model
    of `lib/Scheduling/Bppsa.h` (per row of `rows`, a stage of `layers`
    linear layers of `width`, Jacobians `dense`, `diagonal` or `banded`);
    forwards keep the step's cost. The result is an ordinary job graph:
    simulate, lower and run it like any other. The step records the
    scan's figures per microbatch as `sched.bppsa` (for `--sched-stats`).
    A step that is already scanned is left alone. Linear in the jobs.
  }];
  let options = [
    Option<"width", "width", "int64_t", /*default=*/"64",
           "Width H of a stage's activation rows">,
    Option<"rows", "rows", "int64_t", /*default=*/"1",
           "Rows of a microbatch">,
    Option<"layers", "layers", "int64_t", /*default=*/"1",
           "Linear layers per stage">,
    Option<"form", "form", "::pipesched::scheduling::JacobianForm",
           /*default=*/"::pipesched::scheduling::JacobianForm::Dense",
           "How a stage's Jacobian is stored", [{::llvm::cl::values(
             clEnumValN(::pipesched::scheduling::JacobianForm::Dense, "dense",
                        "H x H per row"),
             clEnumValN(::pipesched::scheduling::JacobianForm::Diagonal,
                        "diagonal", "an elementwise stage"),
             clEnumValN(::pipesched::scheduling::JacobianForm::Banded,
                        "banded", "CSR with `band` nonzeros per row"))}]>,
    Option<"band", "band", "int64_t", /*default=*/"1",
           "Nonzeros per Jacobian row when banded">,
    Option<"placement", "placement", "::pipesched::scheduling::ScanPlacement",
           /*default=*/"::pipesched::scheduling::ScanPlacement::Owner",
           "Where a product runs", [{::llvm::cl::values(
             clEnumValN(::pipesched::scheduling::ScanPlacement::Owner, "owner",
                        "on the worker of its newest operand's stage"),
             clEnumValN(::pipesched::scheduling::ScanPlacement::Spread,
                        "spread", "round robin over the workers per level"))}]>,
    Option<"maxJobs", "max-jobs", "int64_t", /*default=*/"int64_t(1) << 22",
           "Most jobs the scanned step may hold, forwards included (the scan "
           "adds several per stage and microbatch)">,
    Option<"macsPerUnit", "macs-per-unit", "int64_t", /*default=*/"0",
           "Multiply-adds per time unit; 0: one unit is one sequential "
           "input-gradient step of a stage (rows x layers x width x the "
           "nonzeros of a row)">,
  ];
  let dependentDialects = ["::pipesched::sched::SchedDialect"];
}

def SchedStats : Pass<"sched-stats", "::mlir::ModuleOp"> {
  let summary = "Report latency, bubbles, memory and traffic of simulated steps";
  let description = [{
    For every simulated `sched.step` of the module (in order), prints per
    worker and in total: latency (makespan), busy time, bubble fraction in
    both conventions (idle / total, and idle / ideal as Megatron's
    `(p-1)/m`), throughput per worker `rho = S*B / (L*W)` with `L` in units
    of one stage's forward + backward, activations and gradients received,
    weight fetches, peak live activations (count and bytes), weights owned,
    and the bound `rho <= M/S` with how close the schedule comes.

    `--sched-stats` prints a table, `--sched-stats=json` (or
    `format=json`) JSON. Output goes to stdout; the IR is unchanged.
  }];
  let options = [
    Option<"format", "format", "::pipesched::StatsFormat",
           /*default=*/"::pipesched::StatsFormat::Table", "Output format",
           [{::llvm::cl::values(
             clEnumValN(::pipesched::StatsFormat::Table, "table", "a readable table"),
             clEnumValN(::pipesched::StatsFormat::Json, "json", "JSON"))}]>,
  ];
}

def SchedSearch : Pass<"sched-search", "::mlir::ModuleOp"> {
  let summary = "Find the fastest schedule of a step spec, with a lower bound";
  let description = [{
    For every `sched.step` spec of the module: enumerates the schedules
    pipesched can express for its shape and costs (every named strategy
    whose constraints hold, with its parameters: interleaving chunks and
    rounds, LPP/FSLPP groups and rings, the zero-bubble and V families; and
    each placement under the affine priorities and under a cap at the
    memory limit), simulates them exactly as `--sched-simulate` does, and
    rewrites the step into the fastest one that keeps every worker within
    `memory-limit` live activations (or `memory-limit-bytes`, with the
    cost's `act`). Candidates run in increasing order of a lower bound of
    their own and are skipped once it exceeds the `top`-th best latency.
    Prints the ranked runners-up and a certificate: the lower bound every
    schedule of the step obeys (critical path, work / W, the memory-time
    bound), which of them binds, and the gap. Under `memory-limit`, a
    memory-aware list scheduler with local search (`list-search`
    schedules) also places the step job by job, any job on any worker;
    `exact` also finds the true optimum of a tiny step by branch and bound
    over every schedule. When either beats every candidate, the step
    becomes its jobs, each with its worker and order, under a cap at the
    limit.
    With `replay-prefetch=1,2,4` the ranked candidates are lowered at each
    prefetch depth and their rank programs replayed (rendezvous transfers,
    weight fetches and reductions timed from the cost, as
    `--sched-lower-ranks` records them), and ranked by the fastest replay.
    With `layers=FILE` the stage count is searched too: for each of
    `stages` the layers are partitioned as `--sched-partition` does and the
    schedules of that partition searched; the spec becomes the best of all.
    docs/search.md has the space, the bounds and measured gaps.

    ```
    pipeline-opt --sched-search="memory-limit=4" spec.mlir -o best.mlir
    ```
  }];
  let options = [
    Option<"memoryLimit", "memory-limit", "int64_t", /*default=*/"0",
           "Live activations a worker may keep (0: no limit)">,
    Option<"memoryLimitBytes", "memory-limit-bytes", "int64_t", /*default=*/"0",
           "Activation bytes a worker may keep, with the cost's 'act' (0: no limit)">,
    Option<"top", "top", "int64_t", /*default=*/"10",
           "Runners-up to rank and print">,
    Option<"format", "format", "::pipesched::StatsFormat",
           /*default=*/"::pipesched::StatsFormat::Table", "Output format",
           [{::llvm::cl::values(
             clEnumValN(::pipesched::StatsFormat::Table, "table", "a readable table"),
             clEnumValN(::pipesched::StatsFormat::Json, "json", "JSON"))}]>,
    Option<"exact", "exact", "bool", /*default=*/"false",
           "Also find the optimum over every schedule (tiny steps only)">,
    Option<"exactNodes", "exact-nodes", "int64_t", /*default=*/"20000000",
           "Search nodes the exact solver may visit">,
    Option<"listSearch", "list-search", "int64_t", /*default=*/"400",
           "Schedules the memory-aware list scheduler tries under "
           "memory-limit (0: none; fewer on steps past 10^4 jobs)">,
    Option<"maxJobs", "max-jobs", "int64_t", /*default=*/"int64_t(1) << 16",
           "Most jobs a candidate may have">,
    Option<"maxWork", "max-work", "int64_t", /*default=*/"int64_t(1) << 26",
           "Most jobs all candidates together may have (about 0.5 us each)">,
    Option<"layers", "layers", "std::string", /*default=*/"\"\"",
           "A layer file (docs/partition.md): search over the stage count too, "
           "partitioning the layers for each">,
    ListOption<"stageCounts", "stages", "int64_t",
               "Stage counts to try with `layers` (default: 1 to min(L, 2W))">,
    ListOption<"replayPrefetch", "replay-prefetch", "int64_t",
               "Replay the ranked candidates' rank programs lowered at these "
               "prefetch depths and rank them by the fastest replay">,
  ];
  let dependentDialects = ["::pipesched::sched::SchedDialect"];
}

def SchedLowerRanks : Pass<"sched-lower-ranks", "::mlir::ModuleOp"> {
  let summary = "Build one static program per worker from a simulated step";
  let description = [{
    Plans the communication of every placed, simulated `sched.step` of the
    module with the dialect-free planner of `lib/Scheduling/CommPlan.h` and
    replaces the step by a `sched.program`: one `sched.rank` per worker
    holding, in execution order, its jobs and:
    - a `sched.send` / `sched.recv` pair for every tensor a job consumes on
      another worker than the one that made it (once per receiving worker;
      an activation a backward needs on another worker moves too);
    - `sched.fetch_weights` (and the owner's `sched.send_weights`) where
      `w_compute != w_weights`, `prefetch-depth` jobs ahead, and
      `sched.release_weights` after the last job of the window using them;
    - per stage, one gradient reduction after the last weight-gradient job:
      a `sched.allreduce_grad` over replicated owners, or a
      `sched.reduce_grad` to a single owner; then `sched.optimizer_step` on
      each owner.

    Every message is posted at a simulated time `t` (its production, or the
    fetch point): the sender at its first program point at or after `t`,
    the receiver at its first point at or after `t` (a receive is
    prefetched, not left where the consumer runs); per pair of workers
    messages are in the same order on both sides. Consecutive transfers of a
    worker form a `sched.group` (posted together, as ncclGroupStart/End)
    whose results are the tensors received; collectives follow one global
    (time, stage) order. The programs are deadlock-free by construction:
    the planner's `verify()` proves it on the plan (`verify-plan`), and
    `--sched-verify-deadlock-free` on the IR. `owns` lists the stages whose
    weights a worker keeps.
  }];
  let options = [
    Option<"prefetchDepth", "prefetch-depth", "int64_t", /*default=*/"1",
           "Fetch weights this many jobs before the job that needs them">,
    Option<"verifyPlan", "verify-plan", "bool", /*default=*/"true",
           "Check the communication plan (every input local, weights held, "
           "optimizer steps, deadlock freedom) before building the ranks">,
  ];
  let dependentDialects = ["::pipesched::sched::SchedDialect"];
}

def SchedVerifyPhase : Pass<"sched-verify-phase", "::mlir::ModuleOp"> {
  let summary = "Check that the module has reached a phase of the lowering";
  let description = [{
    The check between phases of `--pipeline-lower` (IREE's
    verify-lowering passes are the model): `phase=scheduled` requires every
    `sched.step` to hold a job graph whose every job is placed and simulated
    (`on`, `order`, `at ... to ...`); `phase=lowered` requires that no
    `sched.step` is left (every one became a `sched.program`). A failure
    names the first op out of phase. Linear in the number of jobs.
  }];
  let options = [
    Option<"phase", "phase", "::pipesched::Phase",
           /*default=*/"::pipesched::Phase::Scheduled", "The phase to check",
           [{::llvm::cl::values(
             clEnumValN(::pipesched::Phase::Scheduled, "scheduled",
                        "every step placed and simulated"),
             clEnumValN(::pipesched::Phase::Lowered, "lowered",
                        "only rank programs left"))}]>,
  ];
}

def SchedVerifyDeadlockFree
    : Pass<"sched-verify-deadlock-free", "::mlir::ModuleOp"> {
  let summary = "Prove that the rank programs complete, or show the cycle";
  let description = [{
    Executes the rank programs of every `sched.program` of the module abstractly with rendezvous
    semantics: a send completes only when the matching receive is posted, a
    receive when the matching send is; a `sched.group` is posted as a whole
    and completes when all its operations have; per pair of ranks, sends and
    receives match in program order (NCCL's rule); a collective completes
    when every member has reached it. Matching operations must agree on
    tensor, stage, microbatch, tag and byte size. Either every rank reaches
    its end, or the pass reports the ranks that wait on each other, naming
    the ops. Linear in the number of ops.
  }];
}

#endif // PIPESCHED_TRANSFORMS_PASSES_TD
