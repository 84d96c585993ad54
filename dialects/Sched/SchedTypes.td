//===- SchedTypes.td - sched dialect types ------------------*- tablegen -*-===//

#ifndef PIPESCHED_SCHED_TYPES_TD
#define PIPESCHED_SCHED_TYPES_TD

include "Sched/SchedDialect.td"
include "mlir/IR/AttrTypeBase.td"

class Sched_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Sched_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Sched_TensorType : Sched_Type<"Tensor", "tensor"> {
  let summary = "a tensor that flows between jobs";
  let description = [{
    The value a job produces for its successors: the activation `x[s+1][b]`
    of a forward, or the gradient `z[s][b]` of a backward. Its size in bytes
    comes from the step's cost model, not from the type, so that a graph of
    a million jobs needs a single uniqued type.
  }];
}

#endif // PIPESCHED_SCHED_TYPES_TD
