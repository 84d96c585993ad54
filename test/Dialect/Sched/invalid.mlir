// RUN: pipeline-opt %s -split-input-file -verify-diagnostics

// Tests that a step needs at least one stage.
// expected-error @below {{'sched.step' op property 'stages' failed to satisfy constraint: positive 64-bit integer}}
sched.step stages = 0, microbatches = 1, workers = 1 {
}

// -----

// Tests that a step whose job count overflows is rejected.
// expected-error @below {{'sched.step' op stages * microbatches is too large}}
sched.step stages = 4294967296, microbatches = 4294967296, workers = 1 {
}

// -----

// Tests that a per-stage cost list has one entry per stage.
// expected-error @below {{'sched.step' op cost 'fwd' lists 3 durations for 4 stages}}
sched.step stages = 4, microbatches = 1, workers = 1 cost <fwd = [1, 2, 3], bwd = 2> {
}

// -----

// Tests that a step lists one layer count per stage.
// expected-error @below {{'sched.step' op lists 3 layer counts for 4 stages}}
sched.step stages = 4, microbatches = 1, workers = 1 layers [1, 2, 3] {
}

// -----

// Tests that every stage of a partition holds a layer.
// expected-error @below {{'sched.step' op layers[1] = 0: every stage needs at least one layer}}
sched.step stages = 2, microbatches = 1, workers = 1 layers [2, 0] {
}

// -----

// Tests that a weight-gradient job needs a split backward.
sched.step stages = 1, microbatches = 1, workers = 1 {
  %0 = sched.forward(0, 0)
  %1 = sched.backward(0, 0) grad %0
  // expected-error @below {{'sched.backward_weight' op backward_weight (s=0, b=0) needs a split backward: give the step's cost a 'bwd_w' duration}}
  sched.backward_weight(0, 0) after %1
}

// -----

// Tests that a weight-gradient job follows the input-gradient job of its pair.
sched.step stages = 1, microbatches = 2, workers = 1 cost <fwd = 1, bwd = 1, bwd_w = 1> partial {
  %0 = sched.forward(0, 0)
  %1 = sched.backward(0, 0) grad %0
  // expected-error @below {{'sched.backward_weight' op backward_weight (s=0, b=1) expects its input from backward (s=0, b=1), got the output of backward (s=0, b=0)}}
  sched.backward_weight(0, 1) after %1
}

// -----

// Tests that in a whole step a weight half without a scanned gradient names
// its backward: then BackwardWeightOp::rereadsBackward (no `grad`) and
// having `after` are one condition (a partial step's fragment without
// `after` is refused by the lowering: test/Transforms/pass-order-invalid).
sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 1, bwd_w = 1> {
  %0 = sched.forward(0, 0)
  %1 = sched.backward(0, 0) grad %0
  // expected-error @below {{'sched.backward_weight' op backward_weight (s=0, b=0) expects 1 input from backward (s=0, b=0), got 0}}
  sched.backward_weight(0, 0)
}

// -----

// Tests that a split step holds every weight-gradient job.
// expected-error @below {{'sched.step' op is missing backward_weight (s=0, b=0)}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 1, bwd_w = 1> {
  %0 = sched.forward(0, 0)
  %1 = sched.backward(0, 0) grad %0
}

// -----

// Tests that durations are non-negative.
// expected-error @below {{cost 'bwd' has a negative duration -2}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, bwd = -2> {
}

// -----

// Tests that a duration list is not empty.
// expected-error @below {{cost 'fwd' needs at least one value}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = [], bwd = 2> {
}

// -----

// Tests that sizes are non-negative.
// expected-error @below {{cost sizes must be non-negative}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <act = -1> {
}

// -----

// Tests that the weight half keeps a part of the activation, not more.
// expected-error @below {{cost 'act_w' = 2000 exceeds 'act' = 1000: the weight half keeps a part of the activation}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <bwd_w = 1, act = 1000, act_w = 2000> {
}

// -----

// Tests that the parts of an activation need a weight half.
// expected-error @below {{cost 'act_w' (what the weight half keeps of the activation) needs a split backward: give 'bwd_w'}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <act = 1000, act_w = 400> {
}

// -----

// Tests that unknown cost keys are named.
// expected-error @below {{unknown cost key 'speed' (expected fwd, bwd, bwd_w, fwd_bwd, act, act_w, weights, optimizer, transfer, latency, bandwidth, reduce or unit)}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <speed = 1> {
}

// -----

// Tests that a transfer time is non-negative.
// expected-error @below {{cost 'transfer' has a negative duration -3}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <transfer = -3> {
}

// -----

// Tests that a bandwidth (bytes per second) needs ticks of a real length.
// expected-error @below {{cost 'bandwidth' (bytes per second) needs a 'unit' for its ticks}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <latency = 5, bandwidth = 1000000> {
}

// -----

// Tests that a measured all-reduce is a duration.
// expected-error @below {{cost 'reduce' has a negative duration -4}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <reduce = -4, unit = ns> {
}

// -----

// Tests that optimizer steps list one duration per stage.
// expected-error @below {{cost 'optimizer' lists 3 durations for 2 stages}}
sched.step stages = 2, microbatches = 1, workers = 1 cost <optimizer = [1, 2, 3]> {
}

// -----

// Tests that a time unit is one the printer can write back.
// expected-error @below {{unknown time unit 'ps' (expected ns, us or ms)}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <unit = ps> {
}

// -----

// Tests that a cost key appears once.
// expected-error @below {{cost key 'fwd' appears twice}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, fwd = 2> {
}

// -----

// Tests that only jobs live in a step.
sched.step stages = 1, microbatches = 1, workers = 1 {
  // expected-error @below {{'sched.step' op is not a job and cannot appear in a step}}
  sched.step stages = 1, microbatches = 1, workers = 1 {
  }
}

// -----

// Tests that the stage of a job is in range.
sched.step stages = 2, microbatches = 1, workers = 1 {
  // expected-error @below {{'sched.forward' op stage 2 is out of range [0, 2)}}
  %0 = sched.forward(2, 0)
}

// -----

// Tests that the microbatch of a job is in range.
sched.step stages = 2, microbatches = 1, workers = 1 {
  // expected-error @below {{'sched.forward' op microbatch 1 is out of range [0, 1)}}
  %0 = sched.forward(0, 1)
}

// -----

// Tests that stage and microbatch are non-negative.
sched.step stages = 2, microbatches = 1, workers = 1 {
  // expected-error @below {{'sched.forward' op property 'stage' failed to satisfy constraint: non-negative 64-bit integer}}
  %0 = sched.forward(-1, 0)
}

// -----

// Tests that the compute worker is in range.
sched.step stages = 1, microbatches = 1, workers = 2 {
  // expected-error @below {{'sched.forward' op forward (s=0, b=0) has compute worker 2 outside [0, 2)}}
  %0 = sched.forward(0, 0) on 2
  %1 = sched.backward(0, 0) grad %0
}

// -----

// Tests that the weights worker is in range.
sched.step stages = 1, microbatches = 1, workers = 2 {
  %0 = sched.forward(0, 0)
  // expected-error @below {{'sched.backward' op backward (s=0, b=0) has weights worker 7 outside [0, 2)}}
  %1 = sched.backward(0, 0) grad %0 on 0 weights 7
}

// -----

// Tests that a job is defined once.
sched.step stages = 1, microbatches = 1, workers = 1 {
  // expected-note @below {{first defined here}}
  %0 = sched.forward(0, 0)
  // expected-error @below {{'sched.forward' op forward (s=0, b=0) is defined twice}}
  %1 = sched.forward(0, 0)
  %2 = sched.backward(0, 0) grad %0
}

// -----

// Tests that the forward of stage 0 has no input.
sched.step stages = 2, microbatches = 1, workers = 1 partial {
  %0 = sched.forward(1, 0)
  // expected-error @below {{'sched.forward' op forward (s=0, b=0) takes no activation (no stage feeds stage 0), got 1}}
  %1 = sched.forward(0, 0) from %0
}

// -----

// Tests that a forward is fed by the previous stage, not by another one.
sched.step stages = 3, microbatches = 1, workers = 1 partial {
  %0 = sched.forward(0, 0)
  // expected-error @below {{'sched.forward' op forward (s=2, b=0) expects its activation from forward (s=1, b=0), got the output of forward (s=0, b=0)}}
  %1 = sched.forward(2, 0) from %0
}

// -----

// Tests that a forward is fed by its own microbatch.
sched.step stages = 2, microbatches = 2, workers = 1 partial {
  %0 = sched.forward(0, 1)
  // expected-error @below {{'sched.forward' op forward (s=1, b=0) expects its activation from forward (s=0, b=0), got the output of forward (s=0, b=1)}}
  %1 = sched.forward(1, 0) from %0
}

// -----

// Tests that a forward is fed by a forward, not by a backward.
sched.step stages = 2, microbatches = 1, workers = 1 partial {
  %0 = sched.forward(0, 0)
  %1 = sched.backward(0, 0)
  // expected-error @below {{'sched.forward' op forward (s=1, b=0) expects its activation from forward (s=0, b=0), got the output of backward (s=0, b=0)}}
  %2 = sched.forward(1, 0) from %1
}

// -----

// Tests that a forward takes exactly one activation.
sched.step stages = 2, microbatches = 1, workers = 1 partial {
  %0 = sched.forward(0, 0)
  // expected-error @below {{'sched.forward' op forward (s=1, b=0) expects 1 activation from forward (s=0, b=0), got 2}}
  %1 = sched.forward(1, 0) from %0, %0
}

// -----

// Tests that a complete graph has no missing edge.
sched.step stages = 2, microbatches = 1, workers = 1 {
  %0 = sched.forward(0, 0)
  // expected-error @below {{'sched.forward' op forward (s=1, b=0) expects 1 activation from forward (s=0, b=0), got 0}}
  %1 = sched.forward(1, 0)
  %2 = sched.backward(1, 0) grad %1 act %0
  %3 = sched.backward(0, 0) grad %2
}

// -----

// Tests that an edge comes from a job.
sched.step stages = 2, microbatches = 1, workers = 1 partial {
^bb0(%arg0: !sched.tensor):
  // expected-error @below {{'sched.forward' op forward (s=1, b=0) expects its activation from forward (s=0, b=0), got a value that no job produces}}
  %0 = sched.forward(1, 0) from %arg0
}

// -----

// Tests that the last stage's backward starts from its own forward's output.
sched.step stages = 2, microbatches = 1, workers = 1 partial {
  %0 = sched.forward(0, 0)
  // expected-error @below {{'sched.backward' op backward (s=1, b=0) expects its gradient from forward (s=1, b=0), got the output of forward (s=0, b=0)}}
  %1 = sched.backward(1, 0) grad %0
}

// -----

// Tests that an inner stage's backward takes the next stage's gradient.
sched.step stages = 3, microbatches = 1, workers = 1 partial {
  %0 = sched.forward(0, 0)
  %1 = sched.forward(1, 0) from %0
  %2 = sched.forward(2, 0) from %1
  %3 = sched.backward(2, 0) grad %2 act %1
  // expected-error @below {{'sched.backward' op backward (s=0, b=0) expects its gradient from backward (s=1, b=0), got the output of backward (s=2, b=0)}}
  %4 = sched.backward(0, 0) grad %3
}

// -----

// Tests that a backward reads the activation its forward consumed.
sched.step stages = 3, microbatches = 1, workers = 1 partial {
  %0 = sched.forward(0, 0)
  %1 = sched.forward(1, 0) from %0
  %2 = sched.forward(2, 0) from %1
  // expected-error @below {{'sched.backward' op backward (s=2, b=0) expects its activation from forward (s=1, b=0), got the output of forward (s=0, b=0)}}
  %3 = sched.backward(2, 0) grad %2 act %0
}

// -----

// Tests that the backward of stage 0 reads no activation.
sched.step stages = 1, microbatches = 1, workers = 1 {
  %0 = sched.forward(0, 0)
  // expected-error @below {{'sched.backward' op backward (s=0, b=0) takes no activation (no stage feeds stage 0), got 1}}
  %1 = sched.backward(0, 0) grad %0 act %0
}

// -----

// Tests that a backward is not listed before its forward.
sched.step stages = 2, microbatches = 1, workers = 1 partial {
  %0 = sched.forward(0, 0)
  // expected-error @below {{'sched.backward' op backward (s=1, b=0) appears before its forward}}
  %1 = sched.backward(1, 0) act %0
  // expected-note @below {{forward is here}}
  %2 = sched.forward(1, 0) from %0
}

// -----

// Tests that a complete step holds every job.
// expected-error @below {{'sched.step' op is missing backward (s=0, b=1) (mark the step 'partial' to allow an incomplete graph)}}
sched.step stages = 1, microbatches = 2, workers = 1 {
  %0 = sched.forward(0, 0)
  %1 = sched.backward(0, 0) grad %0
  %2 = sched.forward(0, 1)
}

// -----

// Tests that a use must follow its definition (jobs are in topological order).
sched.step stages = 2, microbatches = 1, workers = 1 partial {
  // expected-error @below {{operand #0 does not dominate this use}}
  %1 = sched.forward(1, 0) from %0
  // expected-note @below {{operand defined here}}
  %0 = sched.forward(0, 0)
}

// -----

// Tests that malformed syntax is a located error, not a crash.
sched.step stages = 1, microbatches = 1, workers = 1 {
  // expected-error @below {{custom op 'sched.forward' expected integer value}}
  // expected-error @below {{custom op 'sched.forward' invalid value for property stage, expected non-negative 64-bit integer}}
  %0 = sched.forward(zero, 0)
}

// -----

// Tests that a worker runs one job per position.
sched.step stages = 1, microbatches = 2, workers = 1 {
  // expected-note @below {{the other op is here}}
  %0 = sched.forward(0, 0) on 0 order 0
  %1 = sched.backward(0, 0) grad %0 on 0 order 1
  // expected-error @below {{'sched.forward' op forward (s=0, b=1) and forward (s=0, b=0) both take position 0 on worker 0}}
  %2 = sched.forward(0, 1) on 0 order 0
  %3 = sched.backward(0, 1) grad %2 on 0 order 2
}

// -----

// Tests that a worker's order runs a job after its inputs made there.
sched.step stages = 1, microbatches = 1, workers = 1 {
  // expected-note @below {{the input is made here}}
  %0 = sched.forward(0, 0) on 0 order 1
  // expected-error @below {{'sched.backward' op backward (s=0, b=0) runs at position 0 on worker 0, not after its input forward (s=0, b=0) at position 1}}
  %1 = sched.backward(0, 0) grad %0 on 0 order 0
}

// -----

// Tests that the number of workers is bounded (every worker gets a program).
// expected-error @below {{'sched.step' op has 99999999999 workers, more than the supported 1048576}}
sched.step stages = 2, microbatches = 4, workers = 99999999999 {
}

// -----

// Tests that the link's bandwidth is not negative.
// expected-error @below {{cost 'bandwidth' must be positive}}
sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 1, bandwidth = -1, unit = ns> {
}

// -----

// Tests that a memory cap names its unit.
// expected-error @below {{expected 'units', 'bytes' or 'none', got 'pages'}}
sched.step stages = 2, microbatches = 2, workers = 2 cap <pages = 2> {
}

// -----

// Tests that a step's name is unique in its module.
// expected-note @below {{see existing symbol definition here}}
sched.step @twice stages = 1, microbatches = 1, workers = 1 {
}
// expected-error @below {{redefinition of symbol named 'twice'}}
sched.step @twice stages = 1, microbatches = 1, workers = 1 {
}
