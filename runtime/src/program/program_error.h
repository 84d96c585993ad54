// The one error a program that cannot run is reported with: a file that
// does not load, a field out of range, ranks that do not agree. Thrown by
// the document reader, the loader and the validator; every message starts
// with the source name and the location in the document:
// "program.json: ranks[1].ops[7].peer: 5 is out of range [0, 4)".
#pragma once

#include <stdexcept>

namespace pipesched::runtime {

struct ProgramError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

} // namespace pipesched::runtime
