#include "exec/backend.h"

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

void Backend::copyRange(Buffer &, size_t, const Buffer &, size_t, size_t) {
  throw std::runtime_error("this backend does not run tied weights (tied_grad)");
}

void Backend::addRange(Buffer &, size_t, const Buffer &, size_t, size_t) {
  throw std::runtime_error("this backend does not run tied weights (tied_grad)");
}

} // namespace pipesched::runtime
