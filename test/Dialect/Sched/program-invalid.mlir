// RUN: pipeline-opt %s -split-input-file -verify-diagnostics

// Tests that communication lives only in rank programs.
sched.step stages = 2, microbatches = 1, workers = 2 partial {
  %0 = sched.forward(0, 0) on 0 order 0
  // expected-error @below {{'sched.send' op expects parent op to be one of 'sched.rank, sched.group'}}
  sched.send %0 act(0, 0) to 1 tag 0 bytes 64
}

// -----

// Tests that a worker does not send to itself.
sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    // expected-error @below {{'sched.send' op sends to or receives from its own worker 0}}
    sched.send %0 act(0, 0) to 0 tag 0 bytes 64
  }
  sched.rank 1 owns [1] {
  }
}

// -----

// Tests that a peer exists.
sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    // expected-error @below {{'sched.send' op peer 5 is outside [0, 2)}}
    sched.send %0 act(0, 0) to 5 tag 0 bytes 64
  }
  sched.rank 1 owns [1] {
  }
}

// -----

// Tests that a transfer names an existing stage.
sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.fetch_weights' op stage 3 is out of range [0, 2)}}
    sched.fetch_weights(3) from 1 tag 0 bytes 64
  }
  sched.rank 1 owns [1] {
  }
}

// -----

// Tests that a collective has sorted, distinct members including its rank.
sched.program stages = 1, microbatches = 1, workers = 3 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
  }
  sched.rank 1 owns [0] {
  }
  sched.rank 2 owns [0] {
    // expected-error @below {{'sched.allreduce_grad' op runs on rank 2, which is not one of its members}}
    sched.allreduce_grad(0) over [0, 1] bytes 64
  }
}

// -----

sched.program stages = 1, microbatches = 1, workers = 3 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.allreduce_grad' op members must be sorted and distinct}}
    sched.allreduce_grad(0) over [1, 0] bytes 64
  }
  sched.rank 1 owns [0] {
  }
  sched.rank 2 owns [0] {
  }
}

// -----

sched.program stages = 1, microbatches = 1, workers = 3 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.allreduce_grad' op needs at least two members}}
    sched.allreduce_grad(0) over [0] bytes 64
  }
  sched.rank 1 owns [0] {
  }
  sched.rank 2 owns [0] {
  }
}

// -----

// Tests that a negative member is refused (it would index outside the
// deadlock check's tables).
sched.program stages = 1, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.allreduce_grad' op member -1 is negative}}
    sched.allreduce_grad(0) over [-1, 0] bytes 64
  }
  sched.rank 1 owns [0] {
  }
}

// -----

// Tests that a reduction's root is a member.
sched.program stages = 1, microbatches = 1, workers = 3 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.reduce_grad' op root 2 is not a member}}
    sched.reduce_grad(0) to 2 over [0, 1] bytes 64
  }
  sched.rank 1 owns [0] {
  }
  sched.rank 2 owns [0] {
  }
}

// -----

// Tests that a group holds only point-to-point transfers.
sched.program stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    sched.group {
      // expected-error @below {{'sched.optimizer_step' op cannot be part of a communication group}}
      sched.optimizer_step(0)
    }
  }
}

// -----

// Tests one rank per worker, in order.
sched.program stages = 1, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
  }
  // expected-error @below {{'sched.rank' op is rank 0, expected rank 1 (one rank per worker, in order)}}
  sched.rank 0 owns [0] {
  }
}

// -----

// expected-error @below {{'sched.program' op has 1 rank programs for 2 workers}}
sched.program stages = 1, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
  }
}

// -----

// Tests that jobs live in a step or a rank, never beside rank programs.
sched.program stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
  }
  // expected-error @below {{'sched.forward' op expects parent op to be one of 'sched.step, sched.rank'}}
  %0 = sched.forward(0, 0) on 0
}

// -----

// Tests that rank programs live only in a program.
sched.step stages = 1, microbatches = 1, workers = 1 partial {
  // expected-error @below {{'sched.rank' op expects parent op 'sched.program'}}
  sched.rank 0 owns [0] {
  }
}

// -----

// Tests that a complete program runs every job of the step.
// expected-error @below {{'sched.program' op runs 1 of the step's 2 jobs}}
sched.program stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 2> makespan 0 {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
  }
}

// -----

// Tests the owned stages.
sched.program stages = 2, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 2> makespan 0 partial {
  // expected-error @below {{'sched.rank' op owns stage 2, outside [0, 2)}}
  sched.rank 0 owns [2] {
  }
}

// -----

// Tests that every job appears once across rank programs.
sched.program stages = 1, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 {
  sched.rank 0 owns [0] {
    // expected-note @below {{first defined here}}
    %0 = sched.forward(0, 0)
    %1 = sched.backward(0, 0) grad %0
  }
  sched.rank 1 owns [0] {
    // expected-error @below {{'sched.forward' op forward (s=0, b=0) is defined twice}}
    %0 = sched.forward(0, 0)
  }
}

// -----

// Tests that a job of a step runs after its inputs on the same worker.
sched.step stages = 2, microbatches = 1, workers = 2 partial {
  // expected-note @below {{the input is made here}}
  %0 = sched.forward(0, 0) on 0 order 1
  // expected-error @below {{'sched.forward' op forward (s=1, b=0) runs at position 0 on worker 0, not after its input forward (s=0, b=0) at position 1}}
  %1 = sched.forward(1, 0) from %0 on 0 order 0
}

// -----

// Tests that a program lists one layer count per stage.
// expected-error @below {{'sched.program' op lists 1 layer counts for 2 stages}}
sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> layers [3] makespan 0 partial {
  sched.rank 0 owns [0] {
  }
  sched.rank 1 owns [1] {
  }
}

// -----

// Tests that a tag is one every MPI accepts (the runtime's bound is at most
// 2^31 - 1): 2^63 - 1 is also DenseMap's reserved key in the exporter.
sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    // expected-error @below {{'sched.send' op property 'tag' failed to satisfy constraint: tag in [0, 2^31)}}
    sched.send %0 act(0, 0) to 1 tag 9223372036854775807 bytes 64
  }
  sched.rank 1 owns [1] {
  }
}

// -----

// Tests that a program holds rank programs only.
sched.program stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 2> makespan 0 partial {
  // expected-error @below {{'builtin.module' op cannot sit beside rank programs in a program}}
  builtin.module {
  }
}

// -----

// Tests that a rank lists the stages it owns once each, in order.
sched.program stages = 2, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 2> makespan 0 partial {
  // expected-error @below {{'sched.rank' op owned stages must be sorted and distinct}}
  sched.rank 0 owns [1, 0] {
  }
}
