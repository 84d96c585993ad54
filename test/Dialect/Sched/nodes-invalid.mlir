// RUN: pipeline-opt %s -split-input-file -verify-diagnostics

// Tests that a map names a node for every worker.
// expected-error @below {{'sched.step' op nodes map lists 2 nodes for 4 workers}}
sched.step stages = 4, microbatches = 8, workers = 4 nodes <map = [0, 1]> {
}

// -----

// Tests that nodes take workers per node or a map, not both.
// expected-error @below {{nodes needs either 'size' or 'map'}}
sched.step stages = 4, microbatches = 8, workers = 4 nodes <size = 2, map = [0, 0, 1, 1]> {
}

// -----

// Tests that nodes take workers per node or a map, not neither.
// expected-error @below {{nodes needs either 'size' or 'map'}}
sched.step stages = 4, microbatches = 8, workers = 4 nodes <transfer = 3> {
}

// -----

// Tests that a node index is not negative.
// expected-error @below {{nodes: a size or node index must not be negative}}
sched.step stages = 4, microbatches = 8, workers = 4 nodes <map = [0, -1, 0, 1]> {
}

// -----

// Tests that the inter-node link has a positive bandwidth.
// expected-error @below {{nodes: transfer and latency must not be negative, bandwidth must be positive}}
sched.step stages = 4, microbatches = 8, workers = 4 nodes <size = 2, bandwidth = 0> {
}

// -----

// Tests that an unknown key is named.
// expected-error @below {{expected 'size', 'map', 'transfer', 'latency' or 'bandwidth', got 'speed'}}
sched.step stages = 4, microbatches = 8, workers = 4 nodes <size = 2, speed = 3> {
}
