// The default worker count: the cgroup CPU quota's formats (v2 cpu.max, v1 cfs_quota_us), the
// process's cgroup and the cgroup mounts as /proc lists them, the walk up to ancestors, the
// combination with the affinity mask, and fj::default_worker_count() against a real scheduler.
// The cgroup files are fakes written to a temporary directory: no real cgroup or container needed.
#include "platform/cpu_quota.hpp" // the parsers (not installed)
#include "support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sched.h>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

using fj::detail::cgroup_cpu_limit;
using fj::detail::cgroup_mount;
using fj::detail::cgroup_version;
using fj::detail::cpu_limit;
using fj::detail::find_cgroup1_cpu_mount;
using fj::detail::find_cgroup2_mount;
using fj::detail::parse_cfs_quota;
using fj::detail::parse_cpu_max;
using fj::detail::parse_proc_cgroup;
using fj::detail::smallest_limit_up_to_mount;
using fj::detail::usable_cpus;

constexpr cpu_limit no_limit = std::nullopt;

using fj_test::thread_count;

std::size_t affinity_mask_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
    return static_cast<std::size_t>(CPU_COUNT(&set));
}

// A directory of fake cgroup files, removed with everything in it at the end of the test.
class fake_cgroup_tree {
public:
    fake_cgroup_tree() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "fj_worker_count_XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr)
            throw std::runtime_error("mkdtemp failed for " + pattern);
        m_root = pattern;
    }
    ~fake_cgroup_tree() {
        std::error_code ignored;
        std::filesystem::remove_all(m_root, ignored);
    }
    fake_cgroup_tree(const fake_cgroup_tree&) = delete;
    fake_cgroup_tree& operator=(const fake_cgroup_tree&) = delete;

    // Writes `contents` to `relative` (directories created as needed).
    void write(const std::string& relative, std::string_view contents) const {
        const std::filesystem::path file = m_root / relative;
        std::filesystem::create_directories(file.parent_path());
        std::ofstream out(file);
        out << contents;
        ASSERT_TRUE(out.good()) << file;
    }
    void make_directory(const std::string& relative) const {
        std::filesystem::create_directories(m_root / relative);
    }
    std::string path(const std::string& relative = {}) const {
        return relative.empty() ? m_root.string() : (m_root / relative).string();
    }

private:
    std::filesystem::path m_root;
};

// A mountinfo line for a cgroup mount, in the kernel's layout (proc(5)), with one optional field.
std::string mountinfo_line(const std::string& root, const std::string& mount_point,
                           const std::string& fstype, const std::string& super_options) {
    return "35 24 0:30 " + root + " " + mount_point +
           " rw,nosuid,nodev,noexec,relatime shared:9 - " + fstype + " " + fstype + " " +
           super_options + "\n";
}

// --- Starting nothing ----------------------------------------------------------------------------

// fj::default_worker_count() answers without starting a thread (no scheduler, no default
// scheduler). First in this file, so that when the whole binary runs no earlier test's threads
// can still be exiting while the tasks are counted.
TEST(worker_count_query, StartsNoThread) {
    const int before = thread_count();
    std::size_t count = 0;
    for (int i = 0; i < 10; ++i)
        count = fj::default_worker_count();
    EXPECT_GE(count, 1u);
    EXPECT_EQ(thread_count(), before);
}

// --- cgroup v2: cpu.max --------------------------------------------------------------------------

// "max" is no limit; a quota is whole CPUs rounded up (a fraction of a CPU still needs a thread),
// so never 0; the kernel's trailing newline is accepted.
TEST(cpu_max, QuotaOverPeriodRoundedUp) {
    EXPECT_EQ(parse_cpu_max("max 100000"), no_limit);
    EXPECT_EQ(parse_cpu_max("max 100000\n"), no_limit);
    EXPECT_EQ(parse_cpu_max("200000 100000"), cpu_limit{2});
    EXPECT_EQ(parse_cpu_max("200000 100000\n"), cpu_limit{2});
    EXPECT_EQ(parse_cpu_max("150000 100000\n"), cpu_limit{2});
    EXPECT_EQ(parse_cpu_max("50000 100000\n"), cpu_limit{1});
    EXPECT_EQ(parse_cpu_max("1 100000\n"), cpu_limit{1});
    EXPECT_EQ(parse_cpu_max("100000 100000\n"), cpu_limit{1});
    EXPECT_EQ(parse_cpu_max("100001 100000\n"), cpu_limit{2});
    EXPECT_EQ(parse_cpu_max("6400000 100000\n"), cpu_limit{64});
    EXPECT_EQ(parse_cpu_max("9223372036854775807 1\n"), cpu_limit{9223372036854775807u});
}

// Anything that is not "QUOTA PERIOD" with both positive is no limit, never an exception.
TEST(cpu_max, MalformedIsNoLimit) {
    for (const char* text : {"",
                             "\n",
                             "max",
                             "200000",
                             "200000 ",
                             " 100000",
                             "abc 100000",
                             "200000 abc",
                             "200000 100000 7",
                             "200000  100000",
                             "200000\t100000x",
                             "200000 0",
                             "200000 -100000",
                             "0 100000",
                             "-200000 100000",
                             "2e5 100000",
                             "+200000 100000",
                             "99999999999999999999 100000",
                             "200000 99999999999999999999",
                             "max max"})
        EXPECT_EQ(parse_cpu_max(text), no_limit) << '"' << text << '"';
}

// --- cgroup v1: cpu.cfs_quota_us and cpu.cfs_period_us
// --------------------------------------------

// -1 is the kernel's "no limit"; otherwise quota / period rounded up, as for v2.
TEST(cfs_quota, QuotaOverPeriodRoundedUp) {
    EXPECT_EQ(parse_cfs_quota("-1\n", "100000\n"), no_limit);
    EXPECT_EQ(parse_cfs_quota("200000\n", "100000\n"), cpu_limit{2});
    EXPECT_EQ(parse_cfs_quota("150000\n", "100000\n"), cpu_limit{2});
    EXPECT_EQ(parse_cfs_quota("50000\n", "100000\n"), cpu_limit{1});
    EXPECT_EQ(parse_cfs_quota("300000", "50000"), cpu_limit{6});
}

// Garbage, empty, zero or negative values are no limit.
TEST(cfs_quota, MalformedIsNoLimit) {
    EXPECT_EQ(parse_cfs_quota("", "100000"), no_limit);
    EXPECT_EQ(parse_cfs_quota("200000", ""), no_limit);
    EXPECT_EQ(parse_cfs_quota("abc", "100000"), no_limit);
    EXPECT_EQ(parse_cfs_quota("200000", "abc"), no_limit);
    EXPECT_EQ(parse_cfs_quota("0", "100000"), no_limit);
    EXPECT_EQ(parse_cfs_quota("-5", "100000"), no_limit);
    EXPECT_EQ(parse_cfs_quota("200000", "0"), no_limit);
    EXPECT_EQ(parse_cfs_quota("200000", "-100000"), no_limit);
    EXPECT_EQ(parse_cfs_quota("200000 1", "100000"), no_limit);
}

// --- /proc/self/cgroup
// -----------------------------------------------------------------------------

// v2 has one line "0::PATH".
TEST(proc_cgroup, UnifiedLine) {
    const auto m = parse_proc_cgroup("0::/a/b\n");
    EXPECT_EQ(m.unified, std::optional<std::string>("/a/b"));
    EXPECT_EQ(m.cpu_controller, std::nullopt);
}

// v1 lists each hierarchy with its controllers; the cpu controller's path is the one that counts,
// whether it shares its hierarchy (cpu,cpuacct) or not, and cpuset or cpuacct alone is not it.
TEST(proc_cgroup, CpuControllerLine) {
    const auto shared = parse_proc_cgroup("12:memory:/docker/abc\n"
                                          "5:cpuset:/elsewhere\n"
                                          "4:cpu,cpuacct:/docker/abc\n"
                                          "1:name=systemd:/docker/abc\n");
    EXPECT_EQ(shared.cpu_controller, std::optional<std::string>("/docker/abc"));
    EXPECT_EQ(shared.unified, std::nullopt);

    const auto alone = parse_proc_cgroup("3:cpuset:/x\n2:cpuacct:/y\n1:cpu:/z\n");
    EXPECT_EQ(alone.cpu_controller, std::optional<std::string>("/z"));

    const auto no_cpu = parse_proc_cgroup("3:cpuset:/x\n2:cpuacct:/y\n");
    EXPECT_EQ(no_cpu.cpu_controller, std::nullopt);
}

// A hybrid system lists both; a path may contain colons; malformed lines are skipped.
TEST(proc_cgroup, HybridColonsAndGarbage) {
    const auto m = parse_proc_cgroup("garbage\n"
                                     "4:cpu,cpuacct:/a:b\n"
                                     "7:cpu:relative/path\n"
                                     "0::/user.slice/x:y\n");
    EXPECT_EQ(m.cpu_controller, std::optional<std::string>("/a:b"));
    EXPECT_EQ(m.unified, std::optional<std::string>("/user.slice/x:y"));

    const auto empty = parse_proc_cgroup("");
    EXPECT_EQ(empty.unified, std::nullopt);
    EXPECT_EQ(empty.cpu_controller, std::nullopt);
}

// --- /proc/self/mountinfo ------------------------------------------------------------------------

// A v1 host (this layout is Debian's with systemd's hybrid mode) with optional fields of several
// counts before " - ": the cgroup2 mount and the cpu controller's mount are found, not cpuset's
// or cpuacct's alone.
TEST(mountinfo, PicksCgroup2AndCpuControllerMounts) {
    const std::string mountinfo =
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "31 23 0:28 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/unified rw,nosuid shared:10 master:3 - cgroup2 cgroup2 "
        "rw,nsdelegate\n"
        "34 31 0:31 / /sys/fs/cgroup/cpuset rw,nosuid shared:12 - cgroup cgroup rw,cpuset\n"
        "35 31 0:32 / /sys/fs/cgroup/cpuacct rw,nosuid - cgroup cgroup rw,cpuacct\n"
        "36 31 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:14 - cgroup cgroup "
        "rw,cpu,cpuacct\n";
    const auto unified = find_cgroup2_mount(mountinfo, "/user.slice");
    ASSERT_TRUE(unified);
    EXPECT_EQ(unified->mount_point, "/sys/fs/cgroup/unified");
    EXPECT_EQ(unified->root, "/");
    const auto cpu = find_cgroup1_cpu_mount(mountinfo, "/user.slice");
    ASSERT_TRUE(cpu);
    EXPECT_EQ(cpu->mount_point, "/sys/fs/cgroup/cpu,cpuacct");
}

// A container that sees only its own part of the hierarchy: the mount's root is the container's
// cgroup, and a mount whose root is not an ancestor of the process's cgroup is not the one.
TEST(mountinfo, PicksTheMountWhoseRootHoldsTheCgroup) {
    const std::string mountinfo = mountinfo_line("/other", "/mnt/other", "cgroup2", "rw") +
                                  mountinfo_line("/docker/abc", "/sys/fs/cgroup", "cgroup2", "rw") +
                                  mountinfo_line("/docker/abcd", "/mnt/cpu2", "cgroup", "rw,cpu") +
                                  mountinfo_line("/docker/abc", "/mnt/cpu", "cgroup", "rw,cpu");
    const auto unified = find_cgroup2_mount(mountinfo, "/docker/abc/inner");
    ASSERT_TRUE(unified);
    EXPECT_EQ(unified->mount_point, "/sys/fs/cgroup");
    EXPECT_EQ(unified->root, "/docker/abc");
    const auto cpu = find_cgroup1_cpu_mount(mountinfo, "/docker/abc");
    ASSERT_TRUE(cpu);
    EXPECT_EQ(cpu->mount_point, "/mnt/cpu"); // "/docker/abcd" is not an ancestor of "/docker/abc"
    EXPECT_EQ(find_cgroup2_mount(mountinfo, "/elsewhere"), std::nullopt);
}

// Paths in mountinfo escape spaces as \040; lines too short or without " - " are skipped; no
// cgroup mount at all is no mount.
TEST(mountinfo, EscapesAndMalformedLines) {
    const std::string mountinfo = "garbage\n"
                                  "1 2 3 / /x rw - \n"
                                  "1 2 3 / /y rw shared:1 cgroup2 cgroup2 rw\n"
                                  "\n" +
                                  mountinfo_line("/", "/sys/fs/my\\040cgroup", "cgroup2", "rw");
    const auto unified = find_cgroup2_mount(mountinfo, "/");
    ASSERT_TRUE(unified);
    EXPECT_EQ(unified->mount_point, "/sys/fs/my cgroup");
    EXPECT_EQ(find_cgroup2_mount("", "/"), std::nullopt);
    EXPECT_EQ(find_cgroup1_cpu_mount(mountinfo, "/"), std::nullopt);
}

// --- The walk up the hierarchy -------------------------------------------------------------------

// A limit on an ancestor binds the process's cgroup too: the smallest one on the way from the
// process's cgroup up to the mount point counts, whichever level sets it.
TEST(cgroup_walk, SmallestLimitAmongAncestorsV2) {
    fake_cgroup_tree tree;
    tree.write("cpu.max", "300000 100000\n"); // the root has no cpu.max on Linux; ignored if so
    tree.write("a/cpu.max", "250000 100000\n");
    tree.write("a/b/cpu.max", "max 100000\n");
    tree.write("a/b/c/cpu.max", "400000 100000\n");
    const cgroup_mount mount{"/", tree.path()};
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/a/b/c", cgroup_version::v2), cpu_limit{3});
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/a/b", cgroup_version::v2), cpu_limit{3});
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/", cgroup_version::v2), cpu_limit{3});

    tree.write("a/b/cpu.max", "100000 100000\n"); // now the middle is the tightest
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/a/b/c", cgroup_version::v2), cpu_limit{1});
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/a", cgroup_version::v2), cpu_limit{3});
}

// Missing files, missing directories and malformed files on the way count as no limit at their
// level, not as an error.
TEST(cgroup_walk, MissingAndMalformedLevelsAreNoLimit) {
    fake_cgroup_tree tree;
    tree.make_directory("a/b/c");
    const cgroup_mount mount{"/", tree.path()};
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/a/b/c", cgroup_version::v2), no_limit);
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/not/there", cgroup_version::v2), no_limit);
    tree.write("a/b/cpu.max", "garbage");
    tree.write("a/cpu.max", "");
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/a/b/c", cgroup_version::v2), no_limit);
    tree.write("a/b/c/cpu.max", "50000 100000\n");
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/a/b/c", cgroup_version::v2), cpu_limit{1});
    const cgroup_mount nowhere{"/", tree.path("absent")};
    EXPECT_EQ(smallest_limit_up_to_mount(nowhere, "/a", cgroup_version::v2), no_limit);
}

// v1 reads the quota and period pair at each level; a mount whose root is the container's cgroup
// maps that cgroup to the mount point itself, and the walk stops there.
TEST(cgroup_walk, V1QuotaAndPeriodUnderAContainerRoot) {
    fake_cgroup_tree tree;
    tree.write("cpu/cpu.cfs_quota_us", "150000\n");
    tree.write("cpu/cpu.cfs_period_us", "100000\n");
    tree.write("cpu/job/cpu.cfs_quota_us", "-1\n");
    tree.write("cpu/job/cpu.cfs_period_us", "100000\n");
    tree.write("cpu.cfs_quota_us", "100000\n"); // above the mount point: never read
    tree.write("cpu.cfs_period_us", "100000\n");
    const cgroup_mount mount{"/docker/abc", tree.path("cpu")};
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/docker/abc", cgroup_version::v1), cpu_limit{2});
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/docker/abc/job", cgroup_version::v1),
              cpu_limit{2});
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/docker/other", cgroup_version::v1), no_limit);
    tree.write("cpu/cpu.cfs_period_us", "0\n");
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/docker/abc/job", cgroup_version::v1), no_limit);
}

// A cgroup outside the process's cgroup namespace shows as "/../..": nothing to read there.
TEST(cgroup_walk, PathOutsideTheNamespaceIsNoLimit) {
    fake_cgroup_tree tree;
    tree.write("cpu.max", "100000 100000\n");
    const cgroup_mount mount{"/", tree.path("a")};
    EXPECT_EQ(smallest_limit_up_to_mount(mount, "/../..", cgroup_version::v2), no_limit);
}

// --- From /proc's text to the limit --------------------------------------------------------------

// The whole chain for a v2 container: /proc/self/cgroup's path, the cgroup2 mount, the walk.
TEST(cgroup_cpu_limit, V2FromProcText) {
    fake_cgroup_tree tree;
    tree.write("kubepods/pod1/cpu.max", "150000 100000\n");
    tree.write("kubepods/pod1/ctr/cpu.max", "max 100000\n");
    const std::string mountinfo = mountinfo_line("/", tree.path(), "cgroup2", "rw,nsdelegate");
    EXPECT_EQ(cgroup_cpu_limit("0::/kubepods/pod1/ctr\n", mountinfo), cpu_limit{2});
    EXPECT_EQ(cgroup_cpu_limit("0::/kubepods\n", mountinfo), no_limit);
    EXPECT_EQ(cgroup_cpu_limit("", mountinfo), no_limit);
    EXPECT_EQ(cgroup_cpu_limit("0::/kubepods/pod1/ctr\n", ""), no_limit);
    EXPECT_EQ(cgroup_cpu_limit("garbage", "garbage"), no_limit);
}

// A hybrid system: the cpu controller lives in a v1 hierarchy and the v2 one has no cpu.max; the
// tighter of what both say is the limit.
TEST(cgroup_cpu_limit, HybridTakesTheTighter) {
    fake_cgroup_tree tree;
    tree.make_directory("unified/service");
    tree.write("cpu,cpuacct/service/cpu.cfs_quota_us", "300000\n");
    tree.write("cpu,cpuacct/service/cpu.cfs_period_us", "100000\n");
    const std::string mountinfo =
        mountinfo_line("/", tree.path("unified"), "cgroup2", "rw") +
        mountinfo_line("/", tree.path("cpuset"), "cgroup", "rw,cpuset") +
        mountinfo_line("/", tree.path("cpu,cpuacct"), "cgroup", "rw,cpu,cpuacct");
    const std::string proc_cgroup = "5:cpuset:/\n4:cpu,cpuacct:/service\n0::/service\n";
    EXPECT_EQ(cgroup_cpu_limit(proc_cgroup, mountinfo), cpu_limit{3});
    tree.write("unified/service/cpu.max", "100000 100000\n");
    EXPECT_EQ(cgroup_cpu_limit(proc_cgroup, mountinfo), cpu_limit{1});
}

// --- The default worker count --------------------------------------------------------------------

// min(affinity mask, quota), at least 1; no limit leaves the mask alone.
TEST(usable_cpus, MaskLoweredToQuotaAtLeastOne) {
    EXPECT_EQ(usable_cpus(8, no_limit), 8u);
    EXPECT_EQ(usable_cpus(8, cpu_limit{2}), 2u);
    EXPECT_EQ(usable_cpus(2, cpu_limit{8}), 2u);
    EXPECT_EQ(usable_cpus(2, cpu_limit{2}), 2u);
    EXPECT_EQ(usable_cpus(1, cpu_limit{1}), 1u);
    EXPECT_EQ(usable_cpus(0, no_limit), 1u);
    EXPECT_EQ(usable_cpus(4, cpu_limit{0}), 1u);
}

class default_worker_count_test : public fj_test::guarded_test {};

// On this machine, whatever its cgroups: reading them never throws, and without FJ_WORKERS the
// count is the mask lowered to that limit, so between 1 and the mask's CPUs.
TEST_F(default_worker_count_test, MaskLoweredToThisProcessLimit) {
    fj_test::scoped_env env("FJ_WORKERS", nullptr);
    const cpu_limit limit = fj::detail::process_cgroup_cpu_limit();
    const std::size_t mask = affinity_mask_cpus();
    const std::size_t count = fj::default_worker_count();
    EXPECT_EQ(count, usable_cpus(mask, limit));
    EXPECT_GE(count, 1u);
    EXPECT_LE(count, mask);
}

// The query answers what a default-sized scheduler then starts, in each way of asking for one.
TEST_F(default_worker_count_test, EqualsDefaultSchedulerWorkerCount) {
    fj_test::scoped_env env("FJ_WORKERS", nullptr);
    const std::size_t count = fj::default_worker_count();
    EXPECT_EQ(fj::scheduler().worker_count(), count);
    EXPECT_EQ(fj::scheduler(std::size_t{0}).worker_count(), count);
    EXPECT_EQ(fj::scheduler(fj::scheduler_options{}).worker_count(), count);
}

// FJ_WORKERS overrides the CPUs for the query as for the scheduler.
TEST_F(default_worker_count_test, FjWorkersOverrides) {
    fj_test::scoped_env env("FJ_WORKERS", "3");
    EXPECT_EQ(fj::default_worker_count(), 3u);
    EXPECT_EQ(fj::scheduler().worker_count(), 3u);
}

// A malformed FJ_WORKERS makes the query throw what the scheduler throws, message included.
TEST_F(default_worker_count_test, MalformedFjWorkersThrowsLikeTheScheduler) {
    fj_test::scoped_env env("FJ_WORKERS", "4x");
    std::string query_message;
    std::string scheduler_message;
    try {
        (void)fj::default_worker_count();
    } catch (const std::invalid_argument& e) {
        query_message = e.what();
    }
    try {
        fj::scheduler s;
    } catch (const std::invalid_argument& e) {
        scheduler_message = e.what();
    }
    EXPECT_NE(query_message.find("FJ_WORKERS='4x'"), std::string::npos) << query_message;
    EXPECT_EQ(query_message, scheduler_message);
}

} // namespace
