// 4 stages on 4 workers with a link (20 us + 1 GB/s) and 1 MiB of weights per stage: what the rank programs spend on communication.
sched.step stages = 4, microbatches = 8, workers = 4
    cost <fwd = 100, bwd = 200, act = 4096, weights = 1048576, latency = 20, bandwidth = 1000000000, unit = us> {
}
