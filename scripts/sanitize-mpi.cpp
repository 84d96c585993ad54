// Linked into pipeline-run by scripts/sanitize.cmake, in the sanitizer build
// (scripts/sanitize.sh) only: keeps OpenMPI's own leaks out of
// LeakSanitizer's reports without hiding any of pipesched's.
//
// OpenMPI 4.1 (Debian bookworm) keeps what MPI_Init allocates (~3,350
// blocks, ~120 KB a rank) past MPI_Finalize, and MPI_Finalize adds a few.
// Most of those are made by MCA components that MPI_Finalize dlclose()s
// before LeakSanitizer runs, or by glibc's asprintf called from them,
// through frames without frame pointers: their stacks name no library that
// a suppression could match (only the slow DWARF unwinder would, at 2-4
// times the run time of every rank). So both calls are wrapped here through
// MPI's profiling interface (PMPI_*): LeakSanitizer ignores what this thread
// allocates inside them. pipesched hands them no callback, so none of its
// own allocations happens in there.
#include <mpi.h>
#include <sanitizer/lsan_interface.h>

extern "C" int MPI_Init(int *argc, char ***argv) {
  __lsan_disable();
  const int result = PMPI_Init(argc, argv);
  __lsan_enable();
  return result;
}

extern "C" int MPI_Finalize() {
  __lsan_disable();
  const int result = PMPI_Finalize();
  __lsan_enable();
  return result;
}

// OpenMPI's PMIx progress thread (started in MPI_Init, so not covered above)
// leaks a block of its own at exit: dlclose does nothing, every library stays
// loaded, and the block's stack names libpmix for scripts/lsan.supp to match.
// It also keeps the model libraries that pipeline-run loads, so that a leak
// in one of them is reported with its functions and lines.
extern "C" int dlclose(void *) { return 0; }
