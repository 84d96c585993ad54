#include "backend.h"

#include <stdexcept>

namespace pipesched::runtime {

// main() refuses a scanned program on a backend without these first; this
// is the backstop.
void Backend::jacobian(int, const Buffer &, const Buffer &, bppsa::Storage, Buffer &) {
  throw std::runtime_error("this backend does not run a scanned backward (BPPSA)");
}

void Backend::combine(bool, const Buffer &, const Buffer &, bppsa::Storage, Buffer &) {
  throw std::runtime_error("this backend does not run a scanned backward (BPPSA)");
}

} // namespace pipesched::runtime
