// How many forkjoin workers one MPI rank should start: its share of the CPUs it may run on.
//
// Several ranks on one node each start a scheduler. If each took one worker per CPU it can see,
// R ranks on C cores would run R x C workers that preempt one another (a preempted worker that
// holds a task everybody joins on stalls them all). So each rank takes its share:
//
//   1. --workers W: exactly W (the caller passes it; a measurement wants a fixed count).
//   2. FJ_WORKERS set: the caller builds fj::scheduler(0), which reads and validates it, as every
//      forkjoin program does. mpirun passes its environment to local ranks; on other nodes use
//      `mpirun -x FJ_WORKERS`.
//   3. Otherwise: the CPUs this rank may use (its affinity mask, lowered to a cgroup CPU quota as
//      fj::default_worker_count() does: a container's ranks share its quota), divided among the
//      ranks on this node whose masks overlap it. mpirun usually binds small runs already (Open MPI
//      4: each rank to its own core for up to 2 ranks): the masks are disjoint and each rank keeps
//      its whole mask. With
//      `--bind-to none` every rank sees all of the node's CPUs and the ranks divide them.
//
// rank_cpu_share() is collective over the communicator: every rank must call it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <mpi.h>
#include <sched.h>
#include <vector>

#include <forkjoin/options.hpp>

namespace rank_workers {

struct cpu_share {
    std::size_t mask_cpus = 0; // CPUs in this rank's affinity mask
    std::size_t usable = 0;    // of those, what a cgroup CPU quota lets it use
    std::size_t sharers = 0;   // ranks on this node whose masks overlap this one, itself included
    std::size_t workers = 0;   // this rank's share of mask_cpus, at least 1
};

// `cpus` split among `sharers` ranks as evenly as possible, the remainder going to the first ones,
// so that the shares add up to `cpus`; never 0 (a rank with no CPU of its own still needs one
// worker to run its tasks).
inline std::size_t share_of(std::size_t cpus, std::size_t sharers, std::size_t position) {
    const std::size_t share = cpus / sharers + (position < cpus % sharers ? 1 : 0);
    return share > 0 ? share : 1;
}

inline cpu_share rank_cpu_share(MPI_Comm comm) {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof(mine), &mine) != 0 || CPU_COUNT(&mine) == 0)
        CPU_SET(0, &mine); // cannot fail for our own process; count one CPU if it somehow does

    // The ranks that share this node's memory are the ones that can share its CPUs.
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_rank = 0, node_size = 1;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    // Raw bytes: every rank on one node runs the same binary, so cpu_set_t has one layout.
    std::vector<cpu_set_t> masks(static_cast<std::size_t>(node_size));
    MPI_Allgather(&mine, sizeof(cpu_set_t), MPI_BYTE, masks.data(), sizeof(cpu_set_t), MPI_BYTE,
                  node);
    MPI_Comm_free(&node);

    std::size_t sharers = 0, position = 0;
    for (int r = 0; r < node_size; ++r) {
        cpu_set_t both;
        CPU_AND(&both, &mine, &masks[static_cast<std::size_t>(r)]);
        if (CPU_COUNT(&both) == 0)
            continue;
        ++sharers;
        if (r < node_rank)
            ++position;
    }
    const auto cpus = static_cast<std::size_t>(CPU_COUNT(&mine));
    // Without FJ_WORKERS, default_worker_count() is the mask lowered to the quota. With it set,
    // the caller sizes the pool from FJ_WORKERS and this share is only reported (and
    // default_worker_count() would answer FJ_WORKERS, or throw for a malformed one).
    const std::size_t usable =
        std::getenv("FJ_WORKERS") != nullptr ? cpus : std::min(cpus, fj::default_worker_count());
    return {cpus, usable, sharers, share_of(usable, sharers, position)};
}

} // namespace rank_workers
