sched.step stages = 1, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 1, bwd_w = 1> partial {
  %0 = sched.forward(0, 0) on 0 weights 0 order 0 at 0 to 1
  %1 = sched.backward(0, 0) grad %0 on 0 weights 0 order 1 at 1 to 2
  sched.backward_weight(0, 0) on 1 weights 0 order 0 at 2 to 3
}
