// RUN: pipeline-opt %s --split-input-file --pipeline-schedule | FileCheck %s
// RUN: pipeline-opt %s --split-input-file --pipeline-schedule --sched-stats -o /dev/null | FileCheck %s --check-prefix=STATS

// Tests the memory model with parts (the Zero Bubble paper's M_B and M_W):
// one worker, weight halves last by priority, a cap of 2 activations.
// Without `act_w` the whole activation lives until its weight half, so the
// third forward waits for W(0): F0 B0 F1 B1 W0 F2 ...
// CHECK-LABEL: sched.step @whole
// CHECK:       sched.backward_weight(0, 0) {{.*}} order 4
// CHECK:       sched.forward(0, 2) {{.*}} order 5
// STATS-LABEL: sched.step stages = 1, microbatches = 4, workers = 1
// STATS:       memory: peak 2 live activations (2000 bytes) on the busiest worker
sched.step @whole stages = 1, microbatches = 4, workers = 1 compute affine_map<(s, b, d) -> (0)> priority affine_map<(s, b, d) -> (d floordiv 2, b, d)> cap <units = 2> cost <fwd = 1, bwd = 1, bwd_w = 1, act = 1000> {
}

// -----

// With `act_w = 400` each input half frees 600 bytes: after B0 and B1 the
// two activations hold 800 bytes, and F2 (1000) fits the cap of 2000, so it
// runs before any weight half: F0 B0 F1 B1 F2 B2 W0 ... Three activations
// are live in part at once, 1800 bytes.
// CHECK-LABEL: sched.step @parts
// CHECK:       sched.backward_weight(0, 0) {{.*}} order 6
// CHECK:       sched.forward(0, 2) {{.*}} order 4
// STATS-LABEL: sched.step stages = 1, microbatches = 4, workers = 1
// STATS:       memory: peak 3 live activations (1800 bytes) on the busiest worker
sched.step @parts stages = 1, microbatches = 4, workers = 1 compute affine_map<(s, b, d) -> (0)> priority affine_map<(s, b, d) -> (d floordiv 2, b, d)> cap <units = 2> cost <fwd = 1, bwd = 1, bwd_w = 1, act = 1000, act_w = 400> {
}

// -----

// The same cap in bytes gives the same order.
// CHECK-LABEL: sched.step @bytes
// CHECK:       sched.backward_weight(0, 0) {{.*}} order 6
// CHECK:       sched.forward(0, 2) {{.*}} order 4
sched.step @bytes stages = 1, microbatches = 4, workers = 1 compute affine_map<(s, b, d) -> (0)> priority affine_map<(s, b, d) -> (d floordiv 2, b, d)> cap <bytes = 2000> cost <fwd = 1, bwd = 1, bwd_w = 1, act = 1000, act_w = 400> {
}

// -----

// ZB-2p (the Zero Bubble repository's greedy, #sched.zb_h2) counts the parts
// too: within its limit of 2p activations (8000 bytes) each rank holds up
// to 16 activations in part at once, where the whole-activation model holds
// 8 (test/unit/ZeroBubbleGreedyTest.cpp checks the orders).
// CHECK-LABEL: sched.step @zb2p
// STATS-LABEL: sched.step stages = 4, microbatches = 16, workers = 4
// STATS:       memory: peak 16 live activations (8000 bytes) on the busiest worker
sched.step @zb2p stages = 4, microbatches = 16, workers = 4 strategy #sched.zb_h2 cost <fwd = 1, bwd = 1, bwd_w = 1, act = 1000, act_w = 400> {
}

// -----

// The Zero Bubble paper's 1.5B setting (p = 8, m = 24, its measured T_F,
// T_B, T_W, T_comm; per layer M_B = 34h + 5as, M_W = 32h, docs/strategies.md):
// counting the parts, ZB-2p's per-stage bubble rate falls from 0.1015 (the
// whole activation kept to W, next case) to 0.0433.
// STATS-LABEL: sched.step stages = 8, microbatches = 24, workers = 8
// STATS:       0.1083 of the makespan {{.*}}, 0.0433 per stage
// STATS:       memory: peak 24 live activations (3185664 bytes) on the busiest worker
sched.step @zb2p_parts stages = 8, microbatches = 24, workers = 8 strategy #sched.zb_h2 cost <fwd = 18522, bwd = 18086, bwd_w = 9337, transfer = 601, act = 201216, act_w = 73728> {
}

// -----

// STATS-LABEL: sched.step stages = 8, microbatches = 24, workers = 8
// STATS:       0.1083 of the makespan {{.*}}, 0.1015 per stage
// STATS:       memory: peak 16 live activations (3219456 bytes) on the busiest worker
sched.step @zb2p_whole stages = 8, microbatches = 24, workers = 8 strategy #sched.zb_h2 cost <fwd = 18522, bwd = 18086, bwd_w = 9337, transfer = 601, act = 201216> {
}
