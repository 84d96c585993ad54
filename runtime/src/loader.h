// Reads a program document (JSON, docs/program-format.md) into a Program,
// checking every field, type and range. Cross-rank consistency (matching
// sends and receives, collective groups, data and weight availability) is
// validate()'s job (validator.h).
#pragma once

#include "program.h"

#include <stdexcept>
#include <string>

namespace pipesched::runtime {

// Every message starts with the source name and the location in the
// document: "program.json: ranks[1].ops[7].peer: 5 is out of range [0, 4)".
struct ProgramError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `worldSize` < 0 skips the check that `workers` equals the launched ranks.
Program parseProgram(const std::string &text, const std::string &source,
                     int worldSize);
Program loadProgram(const std::string &path, int worldSize);

} // namespace pipesched::runtime
