// RUN: pipeline-opt %s --split-input-file --sched-verify-deadlock-free -verify-diagnostics

// Tests that two ranks that both send before receiving, without grouping,
// deadlock under rendezvous semantics (a send completes only when the
// receive is posted), and that the cycle names both ranks and ops.
// expected-error @below {{'sched.program' op rank programs deadlock: rank 0 waits in 'sched.send' act(0, 0) to rank 1 for rank 1; rank 1 waits in 'sched.send' act(0, 1) to rank 0 for rank 0 (a cycle)}}
sched.program stages = 2, microbatches = 2, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    // expected-note @below {{rank 0 is stuck here}}
    sched.send %0 act(0, 0) to 1 tag 0 bytes 64
    %1 = sched.recv act(0, 1) from 1 tag 1 bytes 64
    %2 = sched.forward(1, 1) from %1
  }
  sched.rank 1 owns [1] {
    %0 = sched.forward(0, 1)
    // expected-note @below {{rank 1 is stuck here}}
    sched.send %0 act(0, 1) to 0 tag 1 bytes 64
    %1 = sched.recv act(0, 0) from 0 tag 0 bytes 64
    %2 = sched.forward(1, 0) from %1
  }
}

// -----

// Tests that the same exchange grouped (ncclGroupStart/End) is accepted.
sched.program stages = 2, microbatches = 2, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    %1 = sched.group -> !sched.tensor {
      sched.send %0 act(0, 0) to 1 tag 0 bytes 64
      %3 = sched.recv act(0, 1) from 1 tag 1 bytes 64
      sched.yield %3
    }
    %2 = sched.forward(1, 1) from %1
  }
  sched.rank 1 owns [1] {
    %0 = sched.forward(0, 1)
    %1 = sched.group -> !sched.tensor {
      sched.send %0 act(0, 1) to 0 tag 1 bytes 64
      %3 = sched.recv act(0, 0) from 0 tag 0 bytes 64
      sched.yield %3
    }
    %2 = sched.forward(1, 0) from %1
  }
}

// -----

// Tests that matching operations must agree on their buffer size.
sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    // expected-error @below {{'sched.send' op meets 'sched.recv' act(0, 0) from rank 0, which differs in bytes}}
    sched.send %0 act(0, 0) to 1 tag 0 bytes 64
  }
  sched.rank 1 owns [1] {
    // expected-note @below {{the other side is here}}
    %0 = sched.recv act(0, 0) from 0 tag 0 bytes 32
    %1 = sched.forward(1, 0) from %0
  }
}

// -----

// Tests that per pair of ranks messages match in order (NCCL's rule): the
// first send meets the first receive, whatever they carry.
sched.program stages = 2, microbatches = 2, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    %1 = sched.forward(0, 1)
    // expected-error @below {{'sched.send' op meets 'sched.recv' act(0, 1) from rank 0, which differs in microbatch}}
    sched.send %0 act(0, 0) to 1 tag 0 bytes 64
    sched.send %1 act(0, 1) to 1 tag 1 bytes 64
  }
  sched.rank 1 owns [1] {
    // expected-note @below {{the other side is here}}
    %0 = sched.recv act(0, 1) from 0 tag 1 bytes 64
    %1 = sched.recv act(0, 0) from 0 tag 0 bytes 64
    %2 = sched.forward(1, 0) from %1
    %3 = sched.forward(1, 1) from %0
  }
}

// -----

// Tests a receive whose sender ended without sending.
// expected-error @below {{rank 1 waits in 'sched.recv' act(0, 0) from rank 0 for rank 0, which has finished}}
sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
  }
  sched.rank 1 owns [1] {
    // expected-note @below {{rank 1 is stuck here}}
    %0 = sched.recv act(0, 0) from 0 tag 0 bytes 64
    %1 = sched.forward(1, 0) from %0
  }
}

// -----

// Tests collectives: rank 1 reaches the all-reduce, rank 0 waits for a
// gradient that rank 1 sends only after it.
// expected-error @below {{rank 0 waits in 'sched.recv' grad(1, 0) from rank 1 for rank 1; rank 1 waits in 'sched.allreduce_grad'(0) for rank 0 (a cycle)}}
sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-note @below {{rank 0 is stuck here}}
    %0 = sched.recv grad(1, 0) from 1 tag 0 bytes 64
    sched.allreduce_grad(0) over [0, 1] bytes 256
  }
  sched.rank 1 owns [0, 1] {
    %0 = sched.forward(1, 0)
    %1 = sched.backward(1, 0) grad %0
    // expected-note @below {{rank 1 is stuck here}}
    sched.allreduce_grad(0) over [0, 1] bytes 256
    sched.send %1 grad(1, 0) to 0 tag 0 bytes 64
  }
}

// -----

// Tests that members of a collective must agree on what it reduces.
sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.allreduce_grad' op meets 'sched.allreduce_grad'(1), which differs in stage}}
    sched.allreduce_grad(0) over [0, 1] bytes 256
  }
  sched.rank 1 owns [1] {
    // expected-note @below {{the other side is here}}
    sched.allreduce_grad(1) over [0, 1] bytes 256
  }
}

// -----

// Tests that only a lowered step can be verified.
// expected-error @below {{'sched.step' op has no rank programs to verify: run --sched-lower-ranks first}}
sched.step stages = 1, microbatches = 1, workers = 1 {
  %0 = sched.forward(0, 0) on 0
  %1 = sched.backward(0, 0) grad %0 on 0
}
