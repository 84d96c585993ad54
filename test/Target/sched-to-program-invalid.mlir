// RUN: pipeline-translate --sched-to-program %s --split-input-file -verify-diagnostics -o /dev/null

// Each case is a lowered program that does not form a plan: translating
// reads it back into one and refuses, at the op, what it cannot hold.

sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    // expected-error @+1 {{'sched.send' op has no receiving end: no op of the program receives tag 0}}
    sched.send %0 act(0, 0) to 1 tag 0 bytes 64
  }
  sched.rank 1 owns [1] {
  }
}

// -----

sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
  }
  sched.rank 1 owns [1] {
    // expected-error @+1 {{'sched.recv' op has no sending end: no op of the program sends tag 3}}
    %0 = sched.recv act(0, 0) from 0 tag 3 bytes 64
    %1 = sched.forward(1, 0) from %0
  }
}

// -----

sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    // expected-note @+1 {{the other end}}
    sched.send %0 act(0, 0) to 1 tag 0 bytes 64
  }
  sched.rank 1 owns [1] {
    // expected-error @+1 {{'sched.recv' op states act(0, 0) from rank 0 to rank 1, 32 bytes for tag 0, its other end act(0, 0) from rank 0 to rank 1, 64 bytes}}
    %0 = sched.recv act(0, 0) from 0 tag 0 bytes 32
    %1 = sched.forward(1, 0) from %0
  }
}

// -----

sched.program stages = 2, microbatches = 2, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    // expected-note @+1 {{first used here}}
    sched.send %0 act(0, 0) to 1 tag 0 bytes 64
    %1 = sched.forward(0, 1)
    // expected-error @+1 {{'sched.send' op reuses tag 0: a tag names one message, sent once and received once}}
    sched.send %1 act(0, 1) to 1 tag 0 bytes 64
  }
  sched.rank 1 owns [1] {
    %0 = sched.recv act(0, 0) from 0 tag 0 bytes 64
  }
}

// -----

sched.program stages = 2, microbatches = 2, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.forward(0, 0)
    // expected-error @+1 {{'sched.send' op sends the output of forward (s=0, b=0) as act(0, 1)}}
    sched.send %0 act(0, 1) to 1 tag 0 bytes 64
  }
  sched.rank 1 owns [1] {
    %0 = sched.recv act(0, 1) from 0 tag 0 bytes 64
  }
}

// -----

// Two relays that send each other's received value: nobody computes it.
sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    %0 = sched.recv act(0, 0) from 1 tag 0 bytes 64
    sched.send %0 act(0, 0) to 1 tag 1 bytes 64
  }
  sched.rank 1 owns [1] {
    %0 = sched.recv act(0, 0) from 0 tag 1 bytes 64
    // expected-error @+1 {{'sched.send' op uses a value that no job computes}}
    sched.send %0 act(0, 0) to 0 tag 0 bytes 64
  }
}

// -----

sched.program stages = 1, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-note @+1 {{the other rank's}}
    sched.allreduce_grad(0) over [0, 1] bytes 64
  }
  sched.rank 1 owns [0] {
    // expected-error @+1 {{'sched.allreduce_grad' op disagrees with another rank's reduction of stage 0 (members, root or bytes)}}
    sched.allreduce_grad(0) over [0, 1] bytes 32
  }
}

// -----

sched.program stages = 2, microbatches = 1, workers = 2 tied <[0, 1]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0] {
    // expected-note @+1 {{the other rank's}}
    sched.tied_grad(0) over [0, 1] bytes 64
  }
  sched.rank 1 owns [1] {
    // expected-error @+1 {{'sched.tied_grad' op disagrees with another rank's reduction of tie 0 (members or bytes)}}
    sched.tied_grad(0) over [0, 1] bytes 128
  }
}
