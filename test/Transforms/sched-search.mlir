// RUN: pipeline-opt -split-input-file --sched-search="memory-limit-bytes=8000 top=4" %s | FileCheck %s --check-prefix=BYTES
// RUN: pipeline-opt --sched-search="memory-limit=2 top=3" %S/Inputs/search-tight.mlir | FileCheck %s --check-prefix=TIGHT
// RUN: pipeline-opt --sched-search="memory-limit=2 top=2 exact" %S/Inputs/search-tiny.mlir | FileCheck %s --check-prefix=EXACT
// RUN: pipeline-opt --sched-search="memory-limit=2 top=2 format=json" %S/Inputs/search-tiny.mlir -o /dev/null \
// RUN:   | %python -c "import json, sys; s = json.load(sys.stdin)['steps'][0]; print(s['bound'], s['best_named'], s['ranking'][0]['latency'], s['ranking'][0]['schedule'], s['candidates'], s['simulated'] + s['skipped'], s['job_by_job'], s['best_latency'])" \
// RUN:   | FileCheck %s --check-prefix=JSON
// RUN: pipeline-opt --sched-search="memory-limit=2" --sched-expand --sched-place --sched-simulate --sched-stats %S/Inputs/search-tight.mlir -o /dev/null | FileCheck %s --check-prefix=COMPOSE

// Tests that with a limit in bytes that holds one stage's weights (4000)
// and 1F1B's activations, replicated (DDP) and fetched (FSDP) weights do
// not fit and zero bubble wins; the step's own strategy is replaced.
module @bytes {
  sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.ddp
      cost <fwd = 1, bwd = 1, bwd_w = 1, act = 1000, weights = 4000> {
  }
}
// BYTES:      sched-search: stages = 4, microbatches = 8, workers = 4, memory limit 8000 bytes per worker
// BYTES-NEXT:   candidates 52: 52 simulated (15 stuck, 30 over the limit, 3 equal to a ranked one), 0 skipped by their bounds
// BYTES-NEXT:   lower bound 24: work / W (critical path 9, work / W 24, memory-time 13)
// BYTES-NEXT:   best 27, gap 12.5%; best named strategy #sched.zb_h1 at 27
// BYTES-NEXT:   rank  latency     gap  peak       bytes  schedule
// BYTES-NEXT:      1       27   12.5%     4        8000  strategy #sched.zb_h1
// BYTES-NEXT:      2       30   25.0%     4        8000  strategy #sched<1f1b>
// BYTES-NEXT:      3       30   25.0%     4        8000  strategy #sched.gpipe priority <fill_drain> cap <units = 4>
// BYTES-NEXT:      4       36   50.0%     4        8000  strategy #sched.gpipe priority affine_map<(d0, d1, d2, d3) -> (d1 floordiv 4, (d2 + 2) floordiv 3, d1, d3)> cap <units = 4>
// BYTES-LABEL: module @bytes
// BYTES-NEXT:    sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.zb_h1 cost <fwd = 1, bwd = 1, bwd_w = 1, act = 1000, weights = 4000> {

// -----

// Tests that a step whose shape admits only LPP's placements (B = 6 is not
// a multiple of W = 4, S = 6 not of W) is searched over them: each worker
// owns S/R = 3 stages (3000 bytes), which leaves 5 activations.
module @lpp_only {
  sched.step stages = 6, microbatches = 6, workers = 4
      cost <fwd = 1, bwd = 2, act = 1000, weights = 1000> {
  }
}
// BYTES:      sched-search: stages = 6, microbatches = 6, workers = 4, memory limit 8000 bytes per worker
// BYTES-NEXT:   candidates 24: 24 simulated (6 stuck, 14 over the limit, 2 equal to a ranked one), 0 skipped by their bounds
// BYTES-NEXT:   lower bound 27: work / W (critical path 18, work / W 27, memory-time 23)
// BYTES-NEXT:   best 34, gap 25.9%; no named strategy fits
// BYTES-NEXT:   rank  latency     gap  peak       bytes  schedule
// BYTES-NEXT:      1       34   25.9%     5        8000  strategy #sched.lpp<groups = 2, ring = 2> priority <fill_drain> cap <units = 5>
// BYTES-NEXT:      2       39   44.4%     5        8000  strategy #sched.lpp<groups = 2, ring = 2> priority <backward_first> cap <units = 5>
// BYTES-LABEL: module @lpp_only
// BYTES-NEXT:    sched.step stages = 6, microbatches = 6, workers = 4 strategy #sched.lpp<groups = 2, ring = 2> priority <fill_drain> cap <units = 5> cost

// Where the limit binds, the memory-aware list scheduler places the step
// job by job, any job on any worker, and beats every candidate: 41 against
// 51. The step becomes its jobs, each with its worker and order.
// TIGHT:      sched-search: stages = 4, microbatches = 8, workers = 4, memory limit 2 activations per worker
// TIGHT-NEXT:   candidates 52: 52 simulated (17 stuck, 30 over the limit, 3 equal to a ranked one), 0 skipped by their bounds
// TIGHT-NEXT:   lower bound 32: memory-time (critical path 12, work / W 24, memory-time 32)
// TIGHT-NEXT:   best 41, gap 28.1%; no named strategy fits
// TIGHT-NEXT:   placed job by job (memory-aware list scheduling): 41, peak 2; the step becomes its jobs, each on its worker in its order
// TIGHT-NEXT:   rank  latency     gap  peak  schedule
// TIGHT-NEXT:      1       51   59.4%     2  strategy #sched.gpipe priority <backward_first> cap <units = 2>
// TIGHT-NEXT:      2       52   62.5%     2  strategy #sched.gpipe priority <fill_drain> cap <units = 2>
// TIGHT-LABEL: module @tight
// TIGHT-NEXT:    sched.step stages = 4, microbatches = 8, workers = 4 cap <units = 2> cost <fwd = 1, bwd = 2> {
// TIGHT-NEXT:      %0 = sched.forward(0, 0) on 0 weights 0 order 0
// TIGHT-NEXT:      %1 = sched.forward(1, 0) from %0 on 0 weights 0 order 1

// The exact optimum over every schedule (any job on any worker) beats the
// strategies' 18, and the step becomes the solver's schedule.
// EXACT:      lower bound 11: memory-time (critical path 9, work / W 9, memory-time 11)
// EXACT-NEXT:   best 14, gap 27.3%; no named strategy fits
// EXACT-NEXT:   exact optimum 14 (proven, 264627 nodes)
// EXACT-NEXT:   placed job by job (the exact solver): 14, peak 2; the step becomes its jobs, each on its worker in its order

// JSON: {'binding': 'memory-time', 'critical_path': 9, 'memory_time': 11, 'value': 11, 'work': 9} None 18 strategy #sched.gpipe priority <backward_first> cap <units = 2> 34 34 {'by': 'memory-aware list scheduling', 'chosen': True, 'latency': 15, 'peak_live': 2} 15

// The searched spec composes with the rest of the pipeline.
// COMPOSE: latency: 41 ticks

// -----

// Tests that a placement no framework ships wins where B is not a multiple
// of W: the skewed map (s + b) mod W balances 3 microbatches over 2
// workers and reaches the work bound, 9 against GPipe's 12.
module @skewed {
  sched.step stages = 2, microbatches = 3, workers = 2 cost <fwd = 1, bwd = 2, act = 1, weights = 1> {
  }
}
// BYTES:      sched-search: stages = 2, microbatches = 3, workers = 2, memory limit 8000 bytes per worker
// BYTES:        lower bound 9: work / W (critical path 6, work / W 9, memory-time 1)
// BYTES-NEXT:   best 9, gap 0.0%; best named strategy #sched.gpipe at 12
// BYTES-NEXT:   rank  latency     gap  peak       bytes  schedule
// BYTES-NEXT:      1        9    0.0%     3           5  compute affine_map<(d0, d1, d2) -> ((d0 + d1) mod 2)> priority <breadth_first> cap <none>
// BYTES-LABEL: module @skewed
// BYTES-NEXT:    sched.step stages = 2, microbatches = 3, workers = 2 compute #map priority <breadth_first> cap <none> cost
