#pragma once
// The CPU cores this process may run on.

namespace kiln {

/// The number of cores in this process's CPU affinity mask (sched_getaffinity: a container or taskset may
/// allow fewer than the machine has), else std::thread::hardware_concurrency(); at least 1.
int available_cores();

}  // namespace kiln
