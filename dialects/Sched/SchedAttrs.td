//===- SchedAttrs.td - sched dialect attributes -------------*- tablegen -*-===//

#ifndef PIPESCHED_SCHED_ATTRS_TD
#define PIPESCHED_SCHED_ATTRS_TD

include "Sched/SchedDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Sched_Direction : I32EnumAttr<"Direction", "direction of a job", [
    I32EnumAttrCase<"Forward", 0, "fwd">,
    I32EnumAttrCase<"Backward", 1, "bwd">,
    I32EnumAttrCase<"BackwardWeight", 2, "bwd_w">
  ]> {
  let cppNamespace = "::pipesched::sched";
  let genSpecializedAttr = 0;
}
def Sched_DirectionAttr : EnumAttr<Sched_Dialect, Sched_Direction, "direction">;

class Sched_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Sched_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Sched_CostAttr : Sched_Attr<"Cost", "cost"> {
  let summary = "durations and sizes of the jobs of a step";
  let description = [{
    Durations in abstract units per stage (`fwd`, `bwd`, and `bwd_w` once the
    backward is split into input- and weight-gradient parts) and sizes in
    bytes of one microbatch's activation at a stage boundary (`act`) and of
    one stage's weights (`weights`). A scalar applies to every stage; a list
    gives one value per stage.

    ```mlir
    #sched.cost<fwd = 1, bwd = 2>
    #sched.cost<fwd = [1, 1, 2], bwd = [2, 2, 4], act = 4096, weights = 65536>
    ```

    The defaults (`fwd = 1, bwd = 2`) follow the seed's simulator: one unit
    of the seed's Table 1 (forward + backward of a stage) is 3 ticks.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "forward duration per stage">:$fwd,
    ArrayRefParameter<"int64_t", "backward duration per stage">:$bwd,
    ArrayRefParameter<"int64_t", "weight-gradient duration per stage">:$bwdWeight,
    "int64_t":$actBytes,
    "int64_t":$weightBytes
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Duration of a job of direction `d` at `stage` (0 for `bwd_w` when the
    /// backward is not split).
    int64_t getDuration(int64_t stage, Direction d) const;
    /// Whether the backward is split into `bwd` (input) and `bwd_w` (weights).
    bool isSplitBackward() const { return !getBwdWeight().empty(); }
    static CostAttr getDefault(::mlir::MLIRContext *ctx);
  }];
}

#endif // PIPESCHED_SCHED_ATTRS_TD
