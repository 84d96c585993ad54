// pipeline-compile: --lower-options=bppsa-width=4
// A scanned backward (BPPSA) on a chain of three stages: the scan rules of
// the runtime's validator (unit/ValidatorRulesTest.cpp) break this program.
sched.step stages = 3, microbatches = 1, workers = 3 strategy #sched.gpipe {}
