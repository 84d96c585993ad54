// S = 4, B = 8, W = 4 under two activations per worker, placed job by job
// by --sched-search="memory-limit=2" (its memory-aware list scheduler): a
// backward may run on another rank than its forward, and a stage's weights
// live on every rank that computes it.
module @tight {
  sched.step stages = 4, microbatches = 8, workers = 4 cap <units = 2> cost <fwd = 1, bwd = 2> {
    %0 = sched.forward(0, 0) on 0 weights 0 order 0
    %1 = sched.forward(1, 0) from %0 on 0 weights 0 order 1
    %2 = sched.forward(2, 0) from %1 on 2 weights 2 order 1
    %3 = sched.forward(3, 0) from %2 on 3 weights 3 order 1
    %4 = sched.backward(3, 0) grad %3 act %2 on 3 weights 3 order 2
    %5 = sched.backward(2, 0) grad %4 act %1 on 0 weights 0 order 2
    %6 = sched.backward(1, 0) grad %5 act %0 on 0 weights 0 order 3
    %7 = sched.backward(0, 0) grad %6 on 1 weights 1 order 2
    %8 = sched.forward(0, 1) on 1 weights 1 order 0
    %9 = sched.forward(1, 1) from %8 on 1 weights 1 order 1
    %10 = sched.forward(2, 1) from %9 on 3 weights 3 order 3
    %11 = sched.forward(3, 1) from %10 on 2 weights 2 order 2
    %12 = sched.backward(3, 1) grad %11 act %10 on 2 weights 2 order 3
    %13 = sched.backward(2, 1) grad %12 act %9 on 0 weights 0 order 5
    %14 = sched.backward(1, 1) grad %13 act %8 on 1 weights 1 order 3
    %15 = sched.backward(0, 1) grad %14 on 0 weights 0 order 7
    %16 = sched.forward(0, 2) on 2 weights 2 order 0
    %17 = sched.forward(1, 2) from %16 on 0 weights 0 order 4
    %18 = sched.forward(2, 2) from %17 on 2 weights 2 order 4
    %19 = sched.forward(3, 2) from %18 on 3 weights 3 order 4
    %20 = sched.backward(3, 2) grad %19 act %18 on 2 weights 2 order 5
    %21 = sched.backward(2, 2) grad %20 act %17 on 2 weights 2 order 6
    %22 = sched.backward(1, 2) grad %21 act %16 on 0 weights 0 order 8
    %23 = sched.backward(0, 2) grad %22 on 2 weights 2 order 8
    %24 = sched.forward(0, 3) on 3 weights 3 order 0
    %25 = sched.forward(1, 3) from %24 on 0 weights 0 order 6
    %26 = sched.forward(2, 3) from %25 on 1 weights 1 order 4
    %27 = sched.forward(3, 3) from %26 on 3 weights 3 order 5
    %28 = sched.backward(3, 3) grad %27 act %26 on 3 weights 3 order 6
    %29 = sched.backward(2, 3) grad %28 act %25 on 1 weights 1 order 6
    %30 = sched.backward(1, 3) grad %29 act %24 on 3 weights 3 order 8
    %31 = sched.backward(0, 3) grad %30 on 3 weights 3 order 9
    %32 = sched.forward(0, 4) on 1 weights 1 order 5
    %33 = sched.forward(1, 4) from %32 on 2 weights 2 order 7
    %34 = sched.forward(2, 4) from %33 on 3 weights 3 order 7
    %35 = sched.forward(3, 4) from %34 on 0 weights 0 order 9
    %36 = sched.backward(3, 4) grad %35 act %34 on 0 weights 0 order 10
    %37 = sched.backward(2, 4) grad %36 act %33 on 2 weights 2 order 10
    %38 = sched.backward(1, 4) grad %37 act %32 on 1 weights 1 order 8
    %39 = sched.backward(0, 4) grad %38 on 1 weights 1 order 9
    %40 = sched.forward(0, 5) on 1 weights 1 order 7
    %41 = sched.forward(1, 5) from %40 on 2 weights 2 order 9
    %42 = sched.forward(2, 5) from %41 on 0 weights 0 order 11
    %43 = sched.forward(3, 5) from %42 on 0 weights 0 order 12
    %44 = sched.backward(3, 5) grad %43 act %42 on 0 weights 0 order 13
    %45 = sched.backward(2, 5) grad %44 act %41 on 3 weights 3 order 12
    %46 = sched.backward(1, 5) grad %45 act %40 on 3 weights 3 order 13
    %47 = sched.backward(0, 5) grad %46 on 3 weights 3 order 14
    %48 = sched.forward(0, 6) on 3 weights 3 order 10
    %49 = sched.forward(1, 6) from %48 on 3 weights 3 order 11
    %50 = sched.forward(2, 6) from %49 on 0 weights 0 order 14
    %51 = sched.forward(3, 6) from %50 on 0 weights 0 order 15
    %52 = sched.backward(3, 6) grad %51 act %50 on 0 weights 0 order 16
    %53 = sched.backward(2, 6) grad %52 act %49 on 1 weights 1 order 11
    %54 = sched.backward(1, 6) grad %53 act %48 on 1 weights 1 order 12
    %55 = sched.backward(0, 6) grad %54 on 1 weights 1 order 13
    %56 = sched.forward(0, 7) on 2 weights 2 order 11
    %57 = sched.forward(1, 7) from %56 on 1 weights 1 order 10
    %58 = sched.forward(2, 7) from %57 on 2 weights 2 order 12
    %59 = sched.forward(3, 7) from %58 on 0 weights 0 order 17
    %60 = sched.backward(3, 7) grad %59 act %58 on 0 weights 0 order 18
    %61 = sched.backward(2, 7) grad %60 act %57 on 0 weights 0 order 19
    %62 = sched.backward(1, 7) grad %61 act %56 on 0 weights 0 order 20
    %63 = sched.backward(0, 7) grad %62 on 0 weights 0 order 21
  }
}

