//===- VShapeGreedy.h - V-Min and V-Half by greedy reordering ---*- C++ -*-===//
//
// Dialect-free. The controllable-memory V schedules of Qi, Wan, Amar and
// Lin, "Pipeline Parallelism with Controllable Memory" (NeurIPS 2024), as
// the Zero Bubble repository builds them: sail-sg/zero-bubble-pipeline-
// parallelism at 39f2c186a27580b7051eb51e0f651e1efd0a8170,
// megatron/core/pipeline_parallel/zerobubble/scheduler/zbv_greedy.py
// (`PipelineGraph.create_schedule`, which the runtime calls with
// mem_config "min" or "half"). The jobs and their order are the
// reference's; the code is written from the algorithm.
//
// 2p stages on p ranks in a V: rank r holds stage r (chunk 0) and stage
// 2p-1-r (chunk 1). Time is cut into unit slots; each rank runs four job
// types per microbatch, F (chunk-0 forward), f (chunk-1 forward), B
// (chunk-1 input gradient) and b (chunk-0 input gradient), plus the weight
// halves W. The schedule is built in five steps:
//
//  1. Building block. Microbatch k's jobs on rank r sit at 6k plus fixed
//     offsets:
//       V-Min:  F r, f 2p-1-r, B 2p+g+r, b 4p+g-1-r (g = 2 if 3 | p, else 0)
//       V-Half: F 2r, f 3p-2-r, B 3p+g+2r-1, b 6p+g-r-2 (g = 3 if 2 | p,
//               else 0).
//     The block's lifespan sets the activation a rank holds.
//  2. Weight insertion: walking a rank's slots, every free slot takes the
//     weight half of the oldest backward passed whose weight is pending.
//  3. Reorder with weights: all jobs are visited by (slot, rank, type,
//     microbatch). Before rank 0's first b (warm-up) and after the last
//     microbatch's first F (cool-down), a job moves to the earliest free
//     slot after its dependencies (the neighbour rank's job of the same
//     type, the rank's previous type of the same microbatch, the previous
//     microbatch of the same type; a weight after the matching backward)
//     that does not raise the rank's peak activation (F, f +1, W -1) above
//     the building block's peak; the steady phase keeps its slots. Then
//     "squeeze": a unit-cost list schedule in slot order gives new slots.
//  4. The same without weights (weights are re-derived at the free slots
//     as in step 2 when the memory is counted); only the cool-down moves.
//     Weights are inserted again and the result squeezed.
//  5. Weights are inserted once more, per chunk (a free slot takes chunk
//     1's pending weight before chunk 0's); each rank's order is its jobs
//     by slot.
//
// Peak activation per rank (F +1, W -1, in stage activations) is
// 2 * min(m, (p + 4) / 3) for V-Min and 2 * min(m, (p + 2) / 2) for
// V-Half (checked for p <= 64, m <= 130): the paper's (p+4)//3 and
// (p+2)//2 microbatches of a rank's two stages, against 1F1B's p.
//
// The orders equal the reference's for every p <= 10, m <= 30 and for
// shapes up to p = 32, m = 96 (compared against a transcription of
// zbv_greedy.py that itself matches the repository's file).
//
// Not reproduced: the repository's timing of the result with profiled
// F/B/W/communication costs (it prints a bubble rate but does not change
// the order, which depends on slots only) and its unused
// `do_reorder=False` path.
//
// Cost: O(p m log(p m)) for the building block, the weight insertion, the
// visits and the list schedules. A job moved in step 3 finds its slot with
// a segment tree over its rank's activation levels and a union-find over
// the free slots; one moved in step 4 replays its rank's memory count over
// the slots it skips, which adds O(p^3) for the cool-down (independent of
// m). Memory O(p (p + m)): every rank keeps tables over the step's slots.
// p = m = 256 takes about a second.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_VSHAPEGREEDY_H
#define PIPESCHED_SCHEDULING_VSHAPEGREEDY_H

#include "pipesched/Scheduling/Priorities.h"

#include <cstdint>
#include <string>

namespace pipesched::scheduling {

/// Which building block: V-Min (about a third of 1F1B's activation memory)
/// or V-Half (half).
enum class VShapeMemory : uint8_t { Min, Half };

/// Why the V schedule cannot be built for p ranks and m microbatches, or ""
/// when it can: p >= 1 and m >= 1 (the reference has no other constraint),
/// and p * (p + m) <= 2^21 to bound the slot tables (about a gigabyte
/// there; p = 1024 with m = 1024 is the largest square shape).
std::string checkVShapeGreedy(int64_t p, int64_t m, VShapeMemory memory);

/// The controllable-memory V schedules (zbv_greedy.py): 2p stages on p
/// ranks, rank r holding stages r and 2p-1-r; V-Min keeps about a third of
/// 1F1B's activation memory, V-Half half. Returns each rank's order of
/// Forward, Backward (input half) and BackwardWeight jobs of its two
/// stages. Deterministic; empty when `checkVShapeGreedy` refuses.
WorkerOrders vShapeGreedy(int64_t p, int64_t m, VShapeMemory memory);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_VSHAPEGREEDY_H
