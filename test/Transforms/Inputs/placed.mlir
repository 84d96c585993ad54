sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.1f1b cost <act = 64> {
  %0 = sched.forward(0, 0) on 0 weights 0
  %1 = sched.forward(1, 0) from %0 on 1 weights 1
  %2 = sched.backward(1, 0) grad %1 act %0 on 1 weights 1
  %3 = sched.backward(0, 0) grad %2 on 0 weights 0
  %4 = sched.forward(0, 1) on 0 weights 0
  %5 = sched.forward(1, 1) from %4 on 1 weights 1
  %6 = sched.backward(1, 1) grad %5 act %4 on 1 weights 1
  %7 = sched.backward(0, 1) grad %6 on 0 weights 0
}
