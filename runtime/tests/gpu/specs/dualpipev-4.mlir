// DualPipeV on 4 ranks: V-shaped placement, overlapped forward-backward
// pairs (the GPU checks, runtime/tests/gpu/run-gpu-checks.sh).
sched.step stages = 8, microbatches = 8, workers = 4 strategy #sched.dualpipev cost <fwd = 1, bwd = 1, bwd_w = 1, fwd_bwd = 2> {
}
