// The CPU limit a cgroup quota puts on this process (docker --cpus, Kubernetes CPU limits).
//
// A quota does not shrink the affinity mask: a container limited to 2 CPUs on a 64-CPU host still
// sees 64 CPUs in sched_getaffinity, and 64 workers there would share 2 CPUs' worth of time, each
// preempted while holding work the others wait for. So the default worker count also reads the
// quota, as Go, Java, .NET and Rust's available_parallelism do.
//
//   cgroup v2: /proc/self/cgroup has "0::/path"; the unified hierarchy is the mount of fstype
//              cgroup2 in /proc/self/mountinfo; each directory's cpu.max holds "max PERIOD" (no
//              limit) or "QUOTA PERIOD" (QUOTA/PERIOD CPUs).
//   cgroup v1: /proc/self/cgroup has "ID:cpu,cpuacct:/path"; the hierarchy is the mount of fstype
//              cgroup whose super options list "cpu"; cpu.cfs_quota_us (-1: no limit) and
//              cpu.cfs_period_us.
//
// A limit set on an ancestor binds its descendants too, so the walk goes from the process's cgroup
// up to the mount's root and keeps the smallest limit. Anything missing, unreadable or malformed
// counts as no limit: the affinity mask then decides alone. Nothing here throws for bad input.
//
// The parsing works on text and on directories named by the caller, so tests feed it files of
// their own; only process_cgroup_cpu_limit() reads /proc.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fj::detail {

// Whole CPUs a quota allows: quota / period rounded up (a quota of 1.5 CPUs lets 2 threads run,
// part of the time), so never 0. std::nullopt: no limit.
using cpu_limit = std::optional<std::size_t>;

// The smaller of two limits, where std::nullopt (no limit) is the larger.
cpu_limit tighter_limit(cpu_limit a, cpu_limit b) noexcept;

// cgroup v2 cpu.max: "max 100000" -> no limit, "200000 100000" -> 2, "150000 100000" -> 2.
cpu_limit parse_cpu_max(std::string_view text) noexcept;

// cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us: quota -1 (or any negative) -> no limit.
cpu_limit parse_cfs_quota(std::string_view quota_text, std::string_view period_text) noexcept;

// The process's cgroup paths as /proc/self/cgroup lists them ("ID:CONTROLLERS:PATH" per line).
struct cgroup_membership {
    std::optional<std::string> unified;        // v2: the "0::PATH" line
    std::optional<std::string> cpu_controller; // v1: the hierarchy whose controllers include cpu
};
cgroup_membership parse_proc_cgroup(std::string_view text);

// A cgroup filesystem mount from /proc/self/mountinfo: `root` is the directory of the hierarchy
// that is mounted (not "/" when a container sees only its own part), `mount_point` where it is.
struct cgroup_mount {
    std::string root;
    std::string mount_point;
};

// The cgroup2 mount, or the v1 mount carrying the cpu controller, under which `cgroup_path` lies
// (its root is `cgroup_path` or an ancestor of it). std::nullopt when there is none.
std::optional<cgroup_mount> find_cgroup2_mount(std::string_view mountinfo,
                                               std::string_view cgroup_path);
std::optional<cgroup_mount> find_cgroup1_cpu_mount(std::string_view mountinfo,
                                                   std::string_view cgroup_path);

enum class cgroup_version { v1, v2 };

// The smallest limit found in `cgroup_path`'s directory under `mount` and in each ancestor up to
// the mount point. No limit when `cgroup_path` is not under the mount's root.
cpu_limit smallest_limit_up_to_mount(const cgroup_mount& mount, std::string_view cgroup_path,
                                     cgroup_version version);

// The limit for a process whose /proc/self/cgroup and /proc/self/mountinfo read as given: the
// tighter of the v2 and v1 limits (a hybrid system has both hierarchies; the cpu controller is
// in one of them, and the other has no limit files).
cpu_limit cgroup_cpu_limit(std::string_view proc_cgroup, std::string_view mountinfo);

// cgroup_cpu_limit for the calling process, read afresh on each call (a limit can change while a
// process runs). No limit where /proc is unreadable; never throws.
cpu_limit process_cgroup_cpu_limit() noexcept;

// The CPUs a default-sized pool uses: the affinity mask's count, lowered to the limit, at least 1.
std::size_t usable_cpus(std::size_t affinity_mask_cpus, cpu_limit limit) noexcept;

} // namespace fj::detail
