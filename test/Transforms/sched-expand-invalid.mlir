// RUN: pipeline-opt %s --split-input-file --sched-expand -verify-diagnostics

// Tests that a spec too large to expand is refused, not allowed to exhaust
// memory.
// expected-error @below {{'sched.step' op would expand into 799999999992 jobs, more than max-jobs = 4194304 (--sched-expand=max-jobs=N raises the limit)}}
sched.step stages = 4, microbatches = 99999999999, workers = 4 strategy #sched.gpipe {
}

// -----

// Tests that a spec within the limit expands.
sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.ddp {
}

// -----

// Tests that 10^7 jobs are refused by default at once rather than after
// minutes of growing memory (../shared/bad-inputs/oom-compiler-10m-jobs.mlir).
// expected-error @below {{'sched.step' op would expand into 10000000 jobs, more than max-jobs = 4194304 (--sched-expand=max-jobs=N raises the limit)}}
sched.step stages = 4, microbatches = 1250000, workers = 4 strategy #sched.1f1b {
}
