#include "program/program_file.h"

#include "program/program_error.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace pipesched::runtime::loading {
namespace {

// What a file that is not a regular one is, for messages.
const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

// Refuses what stat() says cannot be a program file: a directory, anything
// but a regular file (a device reads forever, a FIFO blocks), and a
// regular file whose size is not `expect` (when >= 0: the index's).
void checkProgramFile(const std::string &path, const struct stat &st, int64_t expect) {
  if (S_ISDIR(st.st_mode))
    throw ProgramError(path + ": is a directory, not a program file");
  if (!S_ISREG(st.st_mode))
    throw ProgramError(path + ": is " + fileKind(st.st_mode) +
                       ", not a regular file (a program is read from one)");
  if (expect >= 0 && int64_t(st.st_size) != expect)
    throw ProgramError(path + ": " + std::to_string(st.st_size) +
                       " bytes, the index says " + std::to_string(expect) +
                       " (a file from another compile, or truncated?)");
}

// Closes a descriptor when it leaves scope.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0)
      close(fd);
  }
};

} // namespace

struct stat statProgramFile(const std::string &path, int64_t expect) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw ProgramError(path + ": cannot open: " + std::strerror(errno));
  checkProgramFile(path, st, expect);
  return st;
}

std::string readFile(const std::string &path, int64_t expect) {
  FileDescriptor file{open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0)
    throw ProgramError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(file.fd, &st) != 0)
    throw ProgramError(path + ": cannot open: " + std::strerror(errno));
  checkProgramFile(path, st, expect);
  try {
    std::string text(size_t(st.st_size), '\0');
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = read(file.fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        throw ProgramError(path + ": read error: " + std::strerror(errno));
      if (n == 0)
        break; // shrank since fstat: the parser or the size check names it
      done += size_t(n);
    }
    text.resize(done);
    return text;
  } catch (const std::bad_alloc &) {
    throw ProgramError(path + ": out of memory while reading a file of " +
                       std::to_string((st.st_size + (1 << 20) - 1) >> 20) + " MiB");
  }
}

} // namespace pipesched::runtime::loading
