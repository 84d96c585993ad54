// RUN: pipeline-opt %s --split-input-file --verify-diagnostics --sched-expand --sched-place --sched-bppsa
// RUN: not pipeline-opt %s --split-input-file --sched-expand --sched-place --sched-bppsa=width=0 2>&1 | FileCheck %s --check-prefix=WIDTH
// WIDTH: error: {{.*}}bppsa: width = 0 is outside [1, 65536]
// Each option in range, their product (the default time unit) not: refused
// with the product, not an overflow (once UB, then a misleading "durations
// overflow 64-bit time").
// RUN: not pipeline-opt %s --split-input-file --sched-expand --sched-place "--sched-bppsa=width=65536 rows=16777216 layers=1024" 2>&1 | FileCheck %s --check-prefix=UNIT
// UNIT: error: 'sched.step' op bppsa: the default time unit, one sequential input-gradient step of a stage (rows x layers x width x nonzeros per row = 16777216 x 1024 x 65536 x 65536 multiply-adds), overflows 64 bits: give macs-per-unit
// RUN: echo 'sched.step stages = 2, microbatches = 1, workers = 2 strategy #sched.gpipe {}' | pipeline-opt --sched-expand --sched-place "--sched-bppsa=width=65536 rows=16777216 layers=1024 macs-per-unit=1000000" | FileCheck %s --check-prefix=GIVEN
// GIVEN: sched.loss_grad
// RUN: echo 'sched.step stages = 2, microbatches = 1, workers = 2 strategy #sched.gpipe {}' | not pipeline-opt --sched-expand --sched-place "--sched-bppsa=macs-per-unit=-1" 2>&1 | FileCheck %s --check-prefix=NEG-MACS
// The scan adds up to four jobs per stage and microbatch: its total is
// bounded before any is created (S = 8, B = 2: 2 x (8 + 27) = 70).
// RUN: echo 'sched.step stages = 8, microbatches = 2, workers = 2 strategy #sched.gpipe {}' | not pipeline-opt --sched-expand --sched-place "--sched-bppsa=max-jobs=69" 2>&1 | FileCheck %s --check-prefix=MAX-JOBS
// RUN: echo 'sched.step stages = 8, microbatches = 2, workers = 2 strategy #sched.gpipe {}' | pipeline-opt --sched-expand --sched-place "--sched-bppsa=max-jobs=70" | FileCheck %s --check-prefix=GIVEN
// MAX-JOBS: error: 'sched.step' op bppsa: the scanned step would hold 70 jobs (35 per microbatch), more than max-jobs = 69 (--sched-bppsa=max-jobs=N raises the limit)
// NEG-MACS: error: 'sched.step' op bppsa: macs-per-unit must be >= 0 (0: one sequential input-gradient step), got -1

// expected-error @below {{cannot scan the backward of a stage graph that is not a chain}}
sched.step stages = 3, microbatches = 1, workers = 3 graph <0 -> 2, 1 -> 2> strategy #sched.gpipe {
}

// -----

// expected-error @below {{has the static order 'interleaved', which has no place for scan jobs}}
sched.step stages = 4, microbatches = 4, workers = 2 strategy #sched.interleaved_1f1b<chunks = 2> {
}

// -----

// A valid spec (the WIDTH run refuses its width).
sched.step stages = 2, microbatches = 1, workers = 2 strategy #sched.gpipe {
}

// A scanned step has no torch schedule file (torch has no action for its jobs).
// RUN: echo 'sched.step stages = 2, microbatches = 1, workers = 2 strategy #sched.gpipe {}' | pipeline-opt --sched-expand --sched-place --sched-bppsa --sched-simulate | not pipeline-translate --sched-to-torch-csv 2>&1 | FileCheck %s --check-prefix=CSV
// CSV: error: 'sched.loss_grad' op cannot be written as a torch CSV schedule: torch has no action for a job of a scanned backward (BPPSA)
