// RUN: pipeline-opt %s -split-input-file -verify-diagnostics

// Tests that a transfer in a step says where it runs.
sched.step stages = 2, microbatches = 1, workers = 2 partial {
  %0 = sched.forward(0, 0) on 0 order 0
  // expected-error @below {{'sched.send' op in a step needs a worker: add 'on N'}}
  sched.send %0 act(0, 0) to 1 tag 0 bytes 64
}

// -----

// Tests that an op in a rank program runs on its rank.
sched.step stages = 1, microbatches = 1, workers = 1 partial {
  sched.rank 0 owns [0] {
    // expected-error @below {{'sched.optimizer_step' op in a rank program runs on its rank: drop 'on'}}
    sched.optimizer_step(0) on 0
  }
}

// -----

// Tests that a worker does not send to itself.
sched.step stages = 2, microbatches = 1, workers = 2 partial {
  %0 = sched.forward(0, 0) on 0 order 0
  // expected-error @below {{'sched.send' op sends to or receives from its own worker 0}}
  sched.send %0 act(0, 0) to 0 tag 0 bytes 64 on 0 order 1
}

// -----

// Tests that a peer exists.
sched.step stages = 2, microbatches = 1, workers = 2 partial {
  %0 = sched.forward(0, 0) on 0 order 0
  // expected-error @below {{'sched.send' op peer 5 is outside [0, 2)}}
  sched.send %0 act(0, 0) to 5 tag 0 bytes 64 on 0 order 1
}

// -----

// Tests that a transfer names an existing stage.
sched.step stages = 2, microbatches = 1, workers = 2 partial {
  // expected-error @below {{'sched.fetch_weights' op stage 3 is out of range [0, 2)}}
  sched.fetch_weights(3) from 1 tag 0 bytes 64 on 0 order 0
}

// -----

// Tests that a receive in a step names the value sent.
sched.step stages = 2, microbatches = 1, workers = 2 partial {
  // expected-error @below {{'sched.recv' op in a step needs its source: the value sent}}
  %0 = sched.recv act(0, 0) from 0 tag 0 bytes 64 on 1 order 0
}

// -----

// Tests that a receive in a rank program does not.
sched.step stages = 2, microbatches = 1, workers = 2 partial {
  sched.rank 0 owns [] {
    %0 = sched.forward(0, 0)
    // expected-error @below {{'sched.recv' op in a rank program cannot name its source: the value lives on another rank}}
    %1 = sched.recv act(0, 0) from 1 tag 0 bytes 64 source %0
  }
  sched.rank 1 owns [] {
  }
}

// -----

// Tests that a collective has sorted, distinct members including its worker.
sched.step stages = 1, microbatches = 1, workers = 3 partial {
  // expected-error @below {{'sched.allreduce_grad' op runs on worker 2, which is not one of its members}}
  sched.allreduce_grad(0) over [0, 1] bytes 64 on 2 order 0
}

// -----

sched.step stages = 1, microbatches = 1, workers = 3 partial {
  // expected-error @below {{'sched.allreduce_grad' op members must be sorted and distinct}}
  sched.allreduce_grad(0) over [1, 0] bytes 64 on 0 order 0
}

// -----

sched.step stages = 1, microbatches = 1, workers = 3 partial {
  // expected-error @below {{'sched.allreduce_grad' op needs at least two members}}
  sched.allreduce_grad(0) over [0] bytes 64 on 0 order 0
}

// -----

// Tests that a reduction's root is a member.
sched.step stages = 1, microbatches = 1, workers = 3 partial {
  // expected-error @below {{'sched.reduce_grad' op root 2 is not a member}}
  sched.reduce_grad(0) to 2 over [0, 1] bytes 64 on 0 order 0
}

// -----

// Tests that a group holds only point-to-point transfers.
sched.step stages = 1, microbatches = 1, workers = 1 partial {
  sched.rank 0 owns [0] {
    sched.group {
      // expected-error @below {{'sched.optimizer_step' op cannot be part of a communication group}}
      sched.optimizer_step(0)
    }
  }
}

// -----

// Tests one rank per worker, in order.
sched.step stages = 1, microbatches = 1, workers = 2 partial {
  sched.rank 0 owns [0] {
  }
  // expected-error @below {{'sched.rank' op is rank 0, expected rank 1 (one rank per worker, in order)}}
  sched.rank 0 owns [0] {
  }
}

// -----

// expected-error @below {{'sched.step' op has 1 rank programs for 2 workers}}
sched.step stages = 1, microbatches = 1, workers = 2 partial {
  sched.rank 0 owns [0] {
  }
}

// -----

// Tests that rank programs are alone in a lowered step.
sched.step stages = 1, microbatches = 1, workers = 1 partial {
  sched.rank 0 owns [0] {
  }
  // expected-error @below {{'sched.forward' op cannot sit beside rank programs in a lowered step}}
  %0 = sched.forward(0, 0) on 0
}

// -----

// Tests the owned stages.
sched.step stages = 2, microbatches = 1, workers = 1 partial {
  // expected-error @below {{'sched.rank' op owns stage 2, outside [0, 2)}}
  sched.rank 0 owns [2] {
  }
}

// -----

// Tests that every job appears once across rank programs.
sched.step stages = 1, microbatches = 1, workers = 2 {
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

// Tests that communication runs after the job whose output it sends.
sched.step stages = 2, microbatches = 1, workers = 2 partial {
  // expected-note @below {{the input is made here}}
  %0 = sched.forward(0, 0) on 0 order 1
  // expected-error @below {{'sched.send' op 'sched.send' runs at position 0 on worker 0, not after its input forward (s=0, b=0) at position 1}}
  sched.send %0 act(0, 0) to 1 tag 0 bytes 64 on 0 order 0
}
