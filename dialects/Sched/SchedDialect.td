//===- SchedDialect.td - the sched dialect ------------------*- tablegen -*-===//
//
// The `sched` dialect describes one training step of a deep net as a master
// schedule: jobs (stage, microbatch, direction), their data edges, and where
// and in which order they run.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHED_DIALECT_TD
#define PIPESCHED_SCHED_DIALECT_TD

include "mlir/IR/OpBase.td"

def Sched_Dialect : Dialect {
  let name = "sched";
  let cppNamespace = "::pipesched::sched";
  let summary = "Master schedules of distributed deep-net training";
  let description = [{
    A training step is a graph of jobs `(s, b, d)`: stage, microbatch and
    direction. Data edges (activations, gradients) are SSA values; placement
    (`w_compute`, `w_weights`) and priority are attributes. Passes expand a
    spec into the graph, place, simulate and lower it to per-rank programs.
  }];
  // Hand-written so that `#sched.1f1b` (a mnemonic that starts with a digit)
  // parses.
  let useDefaultAttributePrinterParser = 0;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Defined beside the attribute storage classes (SchedAttrs.cpp).
    void registerAttributes();
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &printer) const override;
  }];
}

class Sched_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sched_Dialect, mnemonic, traits>;

#endif // PIPESCHED_SCHED_DIALECT_TD
