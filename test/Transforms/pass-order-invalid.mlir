// Tests that every pass run out of order says which pass must come first.

// RUN: not pipeline-opt %S/Inputs/placed.mlir --sched-lower-ranks 2>&1 | FileCheck %s --check-prefix=NOT-SIMULATED
// NOT-SIMULATED: error: 'sched.forward' op forward (s=0, b=0) is not simulated: run --sched-place and --sched-simulate first
// RUN: not pipeline-opt %S/Inputs/placed.mlir --sched-simulate --sched-lower-ranks=prefetch-depth=-1 2>&1 | FileCheck %s --check-prefix=DEPTH
// DEPTH: error: 'sched.step' op cannot plan communication: prefetch-depth must be non-negative
// Phases: once lowered, no step is left for the step passes to act on.
// RUN: pipeline-opt %S/Inputs/placed.mlir --sched-simulate --sched-lower-ranks --sched-lower-ranks --sched-simulate | FileCheck %s --check-prefix=PHASES
// PHASES: sched.program stages = 2, microbatches = 2, workers = 2 cost <fwd = 1, bwd = 2, act = 64> makespan 9 replayed 9 {
// PHASES-NOT: sched.step
// RUN: pipeline-opt %S/Inputs/placed.mlir --sched-simulate | not pipeline-translate --sched-to-program 2>&1 | FileCheck %s --check-prefix=UNLOWERED
// UNLOWERED: error: 'sched.step' op has no rank programs to write: lower it first with `pipeline-opt --pipeline-lower` (or compile the spec in one command with `pipeline-compile`)
// RUN: not pipeline-opt %S/Inputs/placed.mlir --sched-stats 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: error: 'sched.forward' op forward (s=0, b=0) is not simulated: run --sched-place and --sched-simulate first
// RUN: not pipeline-opt %S/Inputs/placed.mlir --pipeline-lower --sched-stats 2>&1 | FileCheck %s --check-prefix=LOWERED
// LOWERED: error: 'sched.program' op holds rank programs: run --sched-stats before --sched-lower-ranks
// RUN: pipeline-opt %S/Inputs/placed.mlir --pipeline-lower | not pipeline-translate --sched-to-torch-csv 2>&1 | FileCheck %s --check-prefix=CSV
// CSV: error: 'sched.program' op holds rank programs: export them with --sched-to-program
// The pipeline takes every option of its passes.
// RUN: not pipeline-opt %examples/1f1b.mlir --pipeline-lower="max-jobs=2" 2>&1 | FileCheck %s --check-prefix=MAXJOBS
// MAXJOBS: error: 'sched.step' op would expand into 64 jobs, more than max-jobs = 2

// A step pass given a spec (no jobs yet) names the passes to run first,
// never exits 0 having done nothing.
// RUN: not pipeline-opt %S/../../examples/1f1b.mlir --sched-place 2>&1 | FileCheck %s --check-prefix=SPEC-PLACE
// SPEC-PLACE: error: 'sched.step' op has no jobs yet: --sched-place needs --sched-expand first
// RUN: not pipeline-opt %S/../../examples/1f1b.mlir --sched-simulate --sched-stats 2>&1 | FileCheck %s --check-prefix=SPEC-SIMULATE
// SPEC-SIMULATE: error: 'sched.step' op has no jobs yet: --sched-simulate needs --sched-expand and --sched-place first
// RUN: not pipeline-opt %S/../../examples/1f1b.mlir --sched-stats 2>&1 | FileCheck %s --check-prefix=SPEC-STATS
// SPEC-STATS: error: 'sched.step' op has no jobs yet: --sched-stats needs --sched-expand, --sched-place and --sched-simulate first
// RUN: not pipeline-opt %S/../../examples/1f1b.mlir --sched-bppsa 2>&1 | FileCheck %s --check-prefix=SPEC-BPPSA
// SPEC-BPPSA: error: 'sched.step' op has no jobs yet: --sched-bppsa needs --sched-expand and --sched-place first
// RUN: not pipeline-opt %S/../../examples/1f1b.mlir --sched-lower-ranks 2>&1 | FileCheck %s --check-prefix=SPEC-LOWER
// SPEC-LOWER: error: 'sched.step' op has no jobs yet: --sched-lower-ranks needs --pipeline-schedule first
