// RUN: pipeline-opt %s -split-input-file -verify-diagnostics

// Tests that ddp needs B a multiple of W.
// expected-error @below {{'sched.step' op ddp needs the microbatch count (6) to be a multiple of the worker count (4): each worker accumulates gradients over B/W microbatches}}
sched.step stages = 4, microbatches = 6, workers = 4 strategy #sched.ddp {
}

// -----

// Tests that fsdp needs B a multiple of W.
// expected-error @below {{'sched.step' op fsdp needs the microbatch count (3) to be a multiple of the worker count (2)}}
sched.step stages = 4, microbatches = 3, workers = 2 strategy #sched.fsdp {
}

// -----

// Tests that gpipe needs S a multiple of W.
// expected-error @below {{'sched.step' op gpipe needs the stage count (6) to be a multiple of the worker count (4): each worker holds S/W consecutive stages}}
sched.step stages = 6, microbatches = 8, workers = 4 strategy #sched.gpipe {
}

// -----

// Tests that 1f1b needs S a multiple of W.
// expected-error @below {{'sched.step' op 1f1b needs the stage count (3) to be a multiple of the worker count (2)}}
sched.step stages = 3, microbatches = 8, workers = 2 strategy #sched.1f1b {
}

// -----

// Tests that interleaved 1F1B needs S = v * W.
// expected-error @below {{'sched.step' op interleaved_1f1b<chunks = 2> needs S = chunks * W = 8 stages, got 6}}
sched.step stages = 6, microbatches = 8, workers = 4 strategy #sched.interleaved_1f1b<chunks = 2> {
}

// -----

// Tests that interleaved 1F1B needs a positive chunk count.
// expected-error @below {{interleaved_1f1b needs at least one chunk per worker, got 0}}
sched.step stages = 6, microbatches = 8, workers = 4 strategy #sched.interleaved_1f1b<chunks = 0> {
}

// -----

// Tests that lpp needs W = G * R.
// expected-error @below {{'sched.step' op lpp<groups = 2, ring = 4> needs W = groups * ring = 8 workers, got 4}}
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.lpp<groups = 2, ring = 4> {
}

// -----

// Tests that lpp needs R to divide S.
// expected-error @below {{'sched.step' op lpp needs the stage count (6) to be a multiple of the ring size (4): each group loops over the stages R at a time}}
sched.step stages = 6, microbatches = 8, workers = 8 strategy #sched.lpp<groups = 2, ring = 4> {
}

// -----

// Tests that lpp needs positive groups and ring.
// expected-error @below {{lpp needs groups >= 1 and ring >= 1, got groups = 0, ring = 4}}
sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.lpp<groups = 0, ring = 4> {
}

// -----

// Tests that fslpp needs W = G * R.
// expected-error @below {{'sched.step' op fslpp<groups = 2, ring = 2> needs W = groups * ring = 4 workers, got 8}}
sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.fslpp<groups = 2, ring = 2> {
}

// -----

// Tests that fslpp needs R to divide S.
// expected-error @below {{'sched.step' op fslpp needs the stage count (3) to be a multiple of the ring size (2)}}
sched.step stages = 3, microbatches = 8, workers = 4 strategy #sched.fslpp<groups = 2, ring = 2> {
}

// -----

// Tests that fslpp needs positive groups and ring.
// expected-error @below {{fslpp needs groups >= 1 and ring >= 1, got groups = 2, ring = -1}}
sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.fslpp<groups = 2, ring = -1> {
}

// -----

// Tests that a placement map has the (s, b, d) -> (worker) shape.
// expected-error @below {{'sched.step' op compute map must map (s, b, d) to one worker, got affine_map<(d0, d1) -> (d0)>}}
sched.step stages = 4, microbatches = 8, workers = 8 compute affine_map<(s, b) -> (s)> {
}

// -----

// Tests that a placement map has one result.
// expected-error @below {{'sched.step' op weights map must map (s, b, d) to one worker, got affine_map<(d0, d1, d2) -> (d0, d1)>}}
sched.step stages = 4, microbatches = 8, workers = 8 compute affine_map<(s, b, d) -> (s)> weights affine_map<(s, b, d) -> (s, b)> {
}

// -----

// Tests that a placement map has no symbols.
// expected-error @below {{'sched.step' op compute map must map (s, b, d) to one worker, got affine_map<(d0, d1, d2)[s0] -> (d0 + s0)>}}
sched.step stages = 4, microbatches = 8, workers = 8 compute affine_map<(s, b, d)[n] -> (s + n)> {
}

// -----

// Tests that an unknown strategy is named.
// expected-error @below {{unknown sched attribute 'zero_bubble'}}
sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.zero_bubble {
}

// -----

// Tests that only `1f1b` starts with a digit.
// expected-error @below {{unknown sched attribute (the only one that starts with a digit is '1f1b')}}
sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched<2f2b> {
}

// -----

// Tests that chunks * W is computed without overflow (2^62 + 1 times 4
// wraps to 4 = S in 64 bits).
// expected-error @below {{'sched.step' op interleaved_1f1b<chunks = 4611686018427387905> needs S = chunks * W stages, more than 2^63 with W = 4}}
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.interleaved_1f1b<chunks = 4611686018427387905> {
}

// -----

// expected-error @below {{'sched.step' op lpp<groups = 4611686018427387905, ring = 4> needs W = groups * ring workers, more than 2^63}}
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.lpp<groups = 4611686018427387905, ring = 4> {
}

// -----

// Tests that a priority key names (s, b, d) or (s, b, d, p).
// expected-error @below {{'sched.step' op priority key must map (s, b, d) or (s, b, d, p) to one or more integers, got affine_map<(d0, d1) -> (d0)>}}
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b priority affine_map<(s, b) -> (s)> {
}

// -----

// Tests that a priority key divides only by positive constants.
// expected-error @below {{'sched.step' op priority key may divide only by positive constants}}
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b priority affine_map<(s, b, d) -> (b floordiv -2)> {
}

// -----

// Tests that an unknown priority name is refused where it is written.
// expected-error @below {{unknown priority 'zero_bubble'}}
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b priority <zero_bubble> {
}

// -----

// Tests that a cap lists one value or one per worker.
// expected-error @below {{'sched.step' op cap lists 3 values for 4 workers}}
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b cap <units = [1, 2, 3]> {
}

// -----

// Tests that a cap is at least one activation.
// expected-error @below {{memory cap must be at least 1, got 0}}
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b cap <units = 0> {
}

// -----

// Tests that a cap in bytes needs the activation size.
// expected-error @below {{'sched.step' op cap in bytes needs the cost's 'act' size}}
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b cap <bytes = 4096> {
}

// -----

// Tests that torch's rounds need B a multiple of the round count.
// expected-error @below {{'sched.step' op interleaved_1f1b with group = torch needs B (9) to be a multiple of max(1, B / W) = 2 rounds, as torch does}}
sched.step stages = 8, microbatches = 9, workers = 4 strategy #sched.interleaved_1f1b<chunks = 2, group = torch> {
}

// -----

// Tests that a group is a positive size or a rule.
// expected-error @below {{interleaved_1f1b group must be megatron, torch or a positive size, got 0}}
sched.step stages = 8, microbatches = 8, workers = 4 strategy #sched.interleaved_1f1b<chunks = 2, group = 0> {
}

// -----

// Tests that a map whose constants overflow as written is refused before
// MLIR folds them: `s * 2^62 * 4` would fold to 0, every job on worker 0.
// expected-error @below {{affine map result 0 overflows 64-bit arithmetic as written: its constants cannot be folded exactly}}
sched.step stages = 4, microbatches = 4, workers = 4 compute affine_map<(s, b, d) -> (s * 4611686018427387904 * 4)> {
}

// -----

// Tests that a weights map with a wrapped constant sum is refused too.
// expected-error @below {{affine map result 0 overflows 64-bit arithmetic as written}}
sched.step stages = 4, microbatches = 4, workers = 4 compute affine_map<(s, b, d) -> (s)> weights affine_map<(s, b, d) -> ((s + 9223372036854775807 + 9223372036854775807 + 2) mod 4)> {
}

// -----

// Tests that a priority key's literal is checked as the placement maps are.
// expected-error @below {{affine map result 1 overflows 64-bit arithmetic as written}}
sched.step stages = 4, microbatches = 4, workers = 4 strategy #sched.1f1b priority affine_map<(s, b, d) -> (b, (s - 4611686018427387904) * 4)> {
}

// -----

// Tests that a map exact as written that overflows on the step's domain is
// refused: at s = 3, s * (2^62 + 1) wraps (to a worker in range at s = 4).
// expected-error @below {{'sched.step' op compute map result 0 overflows 64-bit arithmetic for some job of 4 stages x 4 microbatches}}
sched.step stages = 4, microbatches = 4, workers = 4 compute affine_map<(s, b, d) -> (s * 4611686018427387905 mod 4)> {
}

// -----

// Tests that a priority key is bounded over the sweep positions p < 3S.
// expected-error @below {{'sched.step' op priority key map result 0 overflows 64-bit arithmetic for some job of 4 stages x 4 microbatches}}
sched.step stages = 4, microbatches = 4, workers = 4 strategy #sched.1f1b priority affine_map<(s, b, d, p) -> (p * 1537228672809129302)> {
}
