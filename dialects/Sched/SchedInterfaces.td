//===- SchedInterfaces.td - sched op interfaces -------------*- tablegen -*-===//

#ifndef PIPESCHED_SCHED_INTERFACES_TD
#define PIPESCHED_SCHED_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Sched_JobOpInterface : OpInterface<"JobOpInterface"> {
  let cppNamespace = "::pipesched::sched";
  let description = [{
    A job `(s, b, d)` of the master schedule. Passes walk jobs through this
    interface so that forward and backward (and later communication) ops are
    treated alike.
  }];
  let methods = [
    InterfaceMethod<"The stage `s` of the job.", "int64_t", "getStageIndex", (ins),
      [{}], [{ return $_op.getStage(); }]>,
    InterfaceMethod<"The microbatch `b` of the job.", "int64_t", "getMicrobatchIndex", (ins),
      [{}], [{ return $_op.getMicrobatch(); }]>,
    InterfaceMethod<"The direction `d` of the job.", "::pipesched::sched::Direction",
      "getDirection", (ins)>,
    InterfaceMethod<"The worker that runs the job, if placed.",
      "std::optional<int64_t>", "getComputeWorker", (ins),
      [{}], [{ return $_op.getCompute(); }]>,
    InterfaceMethod<"The worker that owns the job's weights, if placed.",
      "std::optional<int64_t>", "getWeightsWorker", (ins),
      [{}], [{ return $_op.getWeights(); }]>,
    InterfaceMethod<"Places the job on a worker (`w_compute`).", "void",
      "setComputeWorker", (ins "std::optional<int64_t>":$worker),
      [{}], [{ $_op.setCompute(worker); }]>,
    InterfaceMethod<"Sets the owner of the job's weights (`w_weights`).", "void",
      "setWeightsWorker", (ins "std::optional<int64_t>":$worker),
      [{}], [{ $_op.setWeights(worker); }]>,
    InterfaceMethod<"Sets the job's position in its worker's order.", "void",
      "setOrderIndex", (ins "std::optional<int64_t>":$position),
      [{}], [{ $_op.setOrder(position); }]>,
    InterfaceMethod<"Sets the simulated start and end times.", "void",
      "setTimes", (ins "int64_t":$start, "int64_t":$end),
      [{}], [{ $_op.setStart(start); $_op.setEnd(end); }]>,
    InterfaceMethod<"The simulated start time, if simulated.",
      "std::optional<int64_t>", "getStartTime", (ins),
      [{}], [{ return $_op.getStart(); }]>,
    InterfaceMethod<"The simulated end time, if simulated.",
      "std::optional<int64_t>", "getEndTime", (ins),
      [{}], [{ return $_op.getEnd(); }]>,
    InterfaceMethod<"The job's position in its worker's order, if ordered.",
      "std::optional<int64_t>", "getOrderIndex", (ins),
      [{}], [{ return $_op.getOrder(); }]>,
    InterfaceMethod<[{
        The job's own duration, which wins over the step's cost model (the
        jobs of a scanned backward carry one), if any.
      }],
      "std::optional<int64_t>", "getExplicitDuration", (ins),
      [{}], [{ return std::nullopt; }]>,
  ];
}

#endif // PIPESCHED_SCHED_INTERFACES_TD
