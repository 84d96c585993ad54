// A program file read whole, after stat() says it can be one: a directory,
// a device, a FIFO or a file of another size than the per-rank index gives
// is refused with a ProgramError naming the path, before anything of it is
// read or allocated.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>

namespace pipesched::runtime::loading {

// stat() of a program file, checked as readFile checks it, without opening
// it; `expect` >= 0 is the size the index gives it.
struct stat statProgramFile(const std::string &path, int64_t expect);

// The whole file; `expect` >= 0 is the size the index gives it. The file
// is opened without blocking (a FIFO without a writer would block the open)
// and checked through the descriptor before anything is read, so what is
// read is what was checked: a regular file of the expected size, read once
// up to that size (a device or a pipe costs no memory).
std::string readFile(const std::string &path, int64_t expect = -1);

} // namespace pipesched::runtime::loading
