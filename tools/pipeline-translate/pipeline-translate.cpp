//===- pipeline-translate.cpp - schedules in and out of the sched dialect -===//
//
// mlir-translate for master schedules: imports schedules users already have
// (torch.distributed.pipelining CSV) and exports pipesched's.
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "pipesched/Target/Program.h"
#include "pipesched/Target/TorchCSV.h"

int main(int argc, char **argv) {
  pipesched::registerImportTorchCSV();
  pipesched::registerExportTorchCSV();
  pipesched::registerExportProgram();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "pipesched translation driver\n"));
}
