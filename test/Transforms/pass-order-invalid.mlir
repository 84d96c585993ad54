// Tests that every pass run out of order says which pass must come first.

// RUN: not pipeline-opt %S/Inputs/placed.mlir --sched-insert-comm 2>&1 | FileCheck %s --check-prefix=NOT-SIMULATED
// NOT-SIMULATED: error: 'sched.forward' op forward (s=0, b=0) is not simulated: run --sched-place and --sched-simulate first
// RUN: not pipeline-opt %S/Inputs/placed.mlir --sched-simulate --sched-insert-comm=prefetch-depth=-1 2>&1 | FileCheck %s --check-prefix=DEPTH
// DEPTH: error: 'sched.step' op prefetch-depth must be non-negative
// RUN: not pipeline-opt %S/Inputs/placed.mlir --sched-simulate --sched-insert-comm --sched-insert-comm 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: 'sched.step' op already has communication or rank programs
// RUN: not pipeline-opt %S/Inputs/placed.mlir --sched-simulate --sched-insert-comm --sched-simulate 2>&1 | FileCheck %s --check-prefix=RESIM
// RESIM: error: 'sched.step' op can only be simulated before communication is inserted (run --sched-simulate before --sched-insert-comm)
// RUN: not pipeline-opt %S/Inputs/placed.mlir --sched-split-ranks 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: error: 'sched.forward' op has no place in a worker's program: run --sched-simulate and --sched-insert-comm first
// RUN: not pipeline-opt %S/Inputs/placed.mlir --sched-stats 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: error: 'sched.forward' op forward (s=0, b=0) has no simulated time: run --sched-simulate first
// RUN: not pipeline-opt %S/Inputs/placed.mlir --pipeline-lower --sched-stats 2>&1 | FileCheck %s --check-prefix=LOWERED
// LOWERED: error: 'sched.step' op is split into rank programs: run --sched-stats before --sched-split-ranks
// RUN: pipeline-opt %S/Inputs/placed.mlir --pipeline-lower | not pipeline-translate --sched-to-torch-csv 2>&1 | FileCheck %s --check-prefix=CSV
// CSV: error: 'sched.step' op is split into rank programs: export it with --sched-to-program
// The stats of a step with communication still count its jobs only.
// RUN: pipeline-opt %S/Inputs/placed.mlir --sched-simulate --sched-insert-comm --sched-stats -o /dev/null | FileCheck %s --check-prefix=AFTER
// AFTER: latency: 9 ticks
