// libFuzzer target (c): what `pipeline-run --check program.json` does, in
// process and without MPI: the program document is parsed and loaded
// (parseProgram: JSON or CBOR by the first byte, so an input starting
// with a CBOR map head, 0xa0..0xbb or 0xbf, reaches the CBOR scan and
// reader; fields, types, ranges, roles against the stage graph) and validated across ranks (validate: jobs once, data and weights
// in place, optimizer steps, tags, matching transfers and collectives, the
// deadlock proof). A bad document must throw ProgramError with a message
// (main.cpp prints it); any other exception escaping, a crash, sanitizer
// report, leak, timeout or OOM is a finding.
#include "program/loader.h"
#include "program/validator.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace pipesched::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  try {
    // As --check: any world size, the tag bound of MPI's minimum (32767).
    Program program = parseProgram(text, "fuzz.json", /*worldSize=*/-1);
    validate(program, ValidateOptions{32767});
  } catch (const ProgramError &) {
  }
  return 0;
}
