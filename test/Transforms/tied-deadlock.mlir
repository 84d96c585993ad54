// RUN: pipeline-opt %s --split-input-file --sched-verify-deadlock-free -verify-diagnostics

// Tests that a tied reduction waits for every member: rank 1 never calls it.
// expected-error @below {{'sched.program' op rank programs deadlock: rank 0 waits in 'sched.tied_grad'(0) for rank 1, which has finished}}
sched.program stages = 2, microbatches = 1, workers = 2 tied <[0, 1]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-note @below {{rank 0 is stuck here}}
    sched.tied_grad(0) over [0, 1] bytes 64
    sched.optimizer_step(0)
  }
  sched.rank 1 owns [1] {
    sched.optimizer_step(1)
  }
}

// -----

// Tests that the members of a tied reduction agree on its size.
sched.program stages = 2, microbatches = 1, workers = 2 tied <[0, 1]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.tied_grad' op meets 'sched.tied_grad'(0), which differs in bytes}}
    sched.tied_grad(0) over [0, 1] bytes 64
  }
  sched.rank 1 owns [1] {
    // expected-note @below {{the other side is here}}
    sched.tied_grad(0) over [0, 1] bytes 128
  }
}

// -----

// Tests that a tied reduction and an all-reduce over the same members in
// different orders on two ranks meet each other (collectives on one member
// set match in order, as on one NCCL communicator): a mismatch.
sched.program stages = 2, microbatches = 1, workers = 2 tied <[0, 1]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0, 1] {
    // expected-error @below {{'sched.tied_grad' op meets 'sched.allreduce_grad'(0), which differs in tensor}}
    sched.tied_grad(0) over [0, 1] bytes 64
    sched.allreduce_grad(0) over [0, 1] bytes 64
  }
  sched.rank 1 owns [0, 1] {
    // expected-note @below {{the other side is here}}
    sched.allreduce_grad(0) over [0, 1] bytes 64
    sched.tied_grad(0) over [0, 1] bytes 64
  }
}

// -----

// Tests that a tied reduction of one member is local: nothing to wait for.
sched.program stages = 2, microbatches = 1, workers = 2 tied <[0, 1]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0, 1] {
    sched.tied_grad(0) over [0] bytes 64
  }
  sched.rank 1 owns [0, 1] {
    sched.tied_grad(0) over [1] bytes 64
  }
}
