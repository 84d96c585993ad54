// RUN: pipeline-opt %s -split-input-file -verify-diagnostics

// Tests that a tied stage exists.
// expected-error @below {{'sched.step' op tied group 0 names stage 4, outside [0, 4)}}
sched.step stages = 4, microbatches = 1, workers = 1 tied <[0, 4]> {
}

// -----

// Tests that a tie needs two stages.
// expected-error @below {{tied group 1 has 1 stage: a tie needs at least two stages}}
sched.step stages = 4, microbatches = 1, workers = 1 tied <[0, 3], [2]> {
}

// -----

// Tests that an empty group is refused.
// expected-error @below {{tied group 0 has 0 stages: a tie needs at least two stages}}
sched.step stages = 4, microbatches = 1, workers = 1 tied <[]> {
}

// -----

// Tests that a stage shares one weight at most.
// expected-error @below {{stage 0 is tied in groups 0 and 1: a stage shares at most one weight}}
sched.step stages = 4, microbatches = 1, workers = 1 tied <[0, 3], [1, 0]> {
}

// -----

// Tests that a group lists a stage once.
// expected-error @below {{tied group 0 lists stage 3 twice}}
sched.step stages = 4, microbatches = 1, workers = 1 tied <[0, 3, 3]> {
}

// -----

// Tests that a stage is not negative.
// expected-error @below {{tied group 0 names stage -1, which is negative}}
sched.step stages = 4, microbatches = 1, workers = 1 tied <[-1, 3]> {
}

// -----

// Tests that a program checks its ties' stages too.
// expected-error @below {{'sched.program' op tied group 0 names stage 2, outside [0, 2)}}
sched.program stages = 2, microbatches = 1, workers = 1 tied <[0, 2]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0, 1] {
  }
}

// -----

// Tests that a tied reduction names one of the program's ties.
sched.program stages = 2, microbatches = 1, workers = 1 tied <[0, 1]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0, 1] {
    // expected-error @below {{'sched.tied_grad' op names tied group 1, but the program has 1}}
    sched.tied_grad(1) over [0] bytes 0
  }
}

// -----

// Tests that a program without ties has no tied reduction.
sched.program stages = 2, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0, 1] {
    // expected-error @below {{'sched.tied_grad' op names tied group 0, but the program has 0}}
    sched.tied_grad(0) over [0] bytes 0
  }
}

// -----

// Tests that a tied reduction runs on one of its members.
sched.program stages = 2, microbatches = 1, workers = 2 tied <[0, 1]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.tied_grad' op runs on rank 0, which is not one of its members}}
    sched.tied_grad(0) over [1] bytes 0
  }
  sched.rank 1 owns [1] {
  }
}

// -----

// Tests that members are sorted.
sched.program stages = 2, microbatches = 1, workers = 2 tied <[0, 1]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.tied_grad' op members must be sorted and distinct}}
    sched.tied_grad(0) over [1, 0] bytes 0
  }
  sched.rank 1 owns [1] {
  }
}

// -----

// Tests that members exist.
sched.program stages = 2, microbatches = 1, workers = 2 tied <[0, 1]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.tied_grad' op member 2 is outside [0, 2)}}
    sched.tied_grad(0) over [0, 2] bytes 0
  }
  sched.rank 1 owns [1] {
  }
}

// -----

// Tests that a tied reduction has a member.
sched.program stages = 2, microbatches = 1, workers = 1 tied <[0, 1]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0, 1] {
    // expected-error @below {{'sched.tied_grad' op needs at least one member}}
    sched.tied_grad(0) over [] bytes 0
  }
}

// -----

// Tests that a stage number that is a DenseMap reserved key (2^63 - 1) is
// still a range error, not an assertion or a phantom group.
// expected-error @below {{'sched.step' op tied group 0 names stage 9223372036854775807, outside [0, 2)}}
sched.step stages = 2, microbatches = 1, workers = 1 strategy #sched.gpipe tied <[0, 9223372036854775807]> {
}
