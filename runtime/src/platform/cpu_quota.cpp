// Reading the cgroup CPU quota: the text formats, the mount lookup and the walk up the hierarchy.
#include "platform/cpu_quota.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <exception>
#include <fcntl.h>
#include <limits>
#include <unistd.h>
#include <vector>

namespace fj::detail {

namespace {

bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view text) noexcept {
    while (!text.empty() && is_space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && is_space(text.back()))
        text.remove_suffix(1);
    return text;
}

// The whole of `text` as a decimal integer (a leading '-' allowed), else std::nullopt.
std::optional<std::int64_t> parse_integer(std::string_view text) noexcept {
    std::int64_t value = 0;
    const char* const end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    if (text.empty() || error != std::errc{} || stop != end)
        return std::nullopt;
    return value;
}

// quota / period in whole CPUs, rounded up; both must be positive.
cpu_limit whole_cpus(std::int64_t quota, std::int64_t period) noexcept {
    if (quota <= 0 || period <= 0)
        return std::nullopt;
    const auto cpus = static_cast<std::uint64_t>(quota / period + (quota % period != 0 ? 1 : 0));
    return static_cast<std::size_t>(
        std::min<std::uint64_t>(cpus, std::numeric_limits<std::size_t>::max()));
}

// Splits `text` at every `separator`, empty pieces included.
std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> pieces;
    for (;;) {
        const std::size_t at = text.find(separator);
        pieces.push_back(text.substr(0, at));
        if (at == std::string_view::npos)
            return pieces;
        text.remove_prefix(at + 1);
    }
}

bool lists(std::string_view comma_separated, std::string_view name) {
    const std::vector<std::string_view> items = split(comma_separated, ',');
    return std::find(items.begin(), items.end(), name) != items.end();
}

bool is_octal_digit(char c) noexcept {
    return c >= '0' && c <= '7';
}

// mountinfo writes a space, tab, newline or backslash in a path as a three-digit octal escape.
std::string unescape_mount_path(std::string_view text) {
    std::string path;
    path.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 3 < text.size() && is_octal_digit(text[i + 1]) &&
            is_octal_digit(text[i + 2]) && is_octal_digit(text[i + 3])) {
            path.push_back(static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
                                             (text[i + 3] - '0')));
            i += 3;
        } else {
            path.push_back(text[i]);
        }
    }
    return path;
}

// The fields of one mountinfo line that name a cgroup mount (proc(5)):
//   ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [OPTIONAL_FIELD...] - FSTYPE SOURCE
//   SUPER_OPTIONS
// The optional fields vary in number, so the filesystem's fields are found after the "-".
struct mountinfo_entry {
    std::string root;
    std::string mount_point;
    std::string_view fstype;
    std::string_view super_options;
};

std::optional<mountinfo_entry> parse_mountinfo_line(std::string_view line) {
    const std::vector<std::string_view> fields = split(line, ' ');
    constexpr std::ptrdiff_t fields_before_optional = 6;
    if (static_cast<std::ptrdiff_t>(fields.size()) <= fields_before_optional)
        return std::nullopt;
    const auto separator =
        std::find(fields.begin() + fields_before_optional, fields.end(), std::string_view("-"));
    if (fields.end() - separator < 2) // no separator, or no filesystem type after it
        return std::nullopt;
    mountinfo_entry entry;
    entry.root = unescape_mount_path(fields[3]);
    entry.mount_point = unescape_mount_path(fields[4]);
    entry.fstype = separator[1];
    entry.super_options = fields.end() - separator >= 4 ? separator[3] : std::string_view{};
    return entry;
}

// `cgroup_path` relative to `root` ("" for the root itself), or std::nullopt when it is not
// under it. Both are absolute; a root is "/" or has no trailing slash.
std::optional<std::string_view> relative_to(std::string_view root, std::string_view cgroup_path) {
    if (root.empty() || root.front() != '/' || cgroup_path.empty() || cgroup_path.front() != '/')
        return std::nullopt;
    if (root == "/")
        return cgroup_path.substr(1);
    if (cgroup_path.substr(0, root.size()) != root)
        return std::nullopt;
    std::string_view rest = cgroup_path.substr(root.size());
    if (!rest.empty() && rest.front() != '/')
        return std::nullopt; // "/docker/abcd" is not under "/docker/abc"
    while (!rest.empty() && rest.front() == '/')
        rest.remove_prefix(1);
    return rest;
}

template <class Accepts>
std::optional<cgroup_mount> find_mount(std::string_view mountinfo, std::string_view cgroup_path,
                                       Accepts accepts) {
    for (std::string_view line : split(mountinfo, '\n')) {
        const std::optional<mountinfo_entry> entry = parse_mountinfo_line(line);
        if (!entry || !accepts(*entry) || !relative_to(entry->root, cgroup_path))
            continue;
        return cgroup_mount{entry->root, entry->mount_point};
    }
    return std::nullopt;
}

// A small file's contents, or std::nullopt when it cannot be read (absent, a permission, an I/O
// error, or larger than any cgroup or /proc file this reads should be).
std::optional<std::string> read_file(const std::string& path) {
    constexpr std::size_t max_size = std::size_t{16} << 20;
    struct closing_fd {
        int fd;
        ~closing_fd() {
            if (fd >= 0)
                ::close(fd);
        }
    } file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0)
        return std::nullopt;
    std::string contents;
    bool complete = false;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || contents.size() + static_cast<std::size_t>(n) > max_size)
            break;
        if (n == 0) {
            complete = true;
            break;
        }
        contents.append(buffer, static_cast<std::size_t>(n));
    }
    if (!complete)
        return std::nullopt;
    return contents;
}

cpu_limit limit_in_directory(const std::string& directory, cgroup_version version) {
    if (version == cgroup_version::v2) {
        const std::optional<std::string> cpu_max = read_file(directory + "/cpu.max");
        return cpu_max ? parse_cpu_max(*cpu_max) : std::nullopt;
    }
    const std::optional<std::string> quota = read_file(directory + "/cpu.cfs_quota_us");
    const std::optional<std::string> period = read_file(directory + "/cpu.cfs_period_us");
    return quota && period ? parse_cfs_quota(*quota, *period) : std::nullopt;
}

} // namespace

cpu_limit tighter_limit(cpu_limit a, cpu_limit b) noexcept {
    if (!a)
        return b;
    if (!b)
        return a;
    return std::min(*a, *b);
}

cpu_limit parse_cpu_max(std::string_view text) noexcept {
    text = trim(text);
    const std::size_t space = text.find(' ');
    if (space == std::string_view::npos)
        return std::nullopt;
    const std::string_view quota = text.substr(0, space);
    const std::optional<std::int64_t> period = parse_integer(text.substr(space + 1));
    if (quota == "max" || !period)
        return std::nullopt;
    const std::optional<std::int64_t> quota_value = parse_integer(quota);
    return quota_value ? whole_cpus(*quota_value, *period) : std::nullopt;
}

cpu_limit parse_cfs_quota(std::string_view quota_text, std::string_view period_text) noexcept {
    const std::optional<std::int64_t> quota = parse_integer(trim(quota_text));
    const std::optional<std::int64_t> period = parse_integer(trim(period_text));
    return quota && period ? whole_cpus(*quota, *period) : std::nullopt;
}

cgroup_membership parse_proc_cgroup(std::string_view text) {
    cgroup_membership membership;
    for (std::string_view line : split(text, '\n')) {
        // "ID:CONTROLLERS:PATH"; the path is the rest of the line, colons included.
        const std::size_t first = line.find(':');
        const std::size_t second =
            first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos)
            continue;
        const std::string_view id = line.substr(0, first);
        const std::string_view controllers = line.substr(first + 1, second - first - 1);
        const std::string_view path = line.substr(second + 1);
        if (path.empty() || path.front() != '/')
            continue;
        if (id == "0" && controllers.empty()) {
            if (!membership.unified)
                membership.unified = std::string(path);
        } else if (lists(controllers, "cpu") && !membership.cpu_controller) {
            membership.cpu_controller = std::string(path);
        }
    }
    return membership;
}

std::optional<cgroup_mount> find_cgroup2_mount(std::string_view mountinfo,
                                               std::string_view cgroup_path) {
    return find_mount(mountinfo, cgroup_path,
                      [](const mountinfo_entry& e) { return e.fstype == "cgroup2"; });
}

std::optional<cgroup_mount> find_cgroup1_cpu_mount(std::string_view mountinfo,
                                                   std::string_view cgroup_path) {
    return find_mount(mountinfo, cgroup_path, [](const mountinfo_entry& e) {
        return e.fstype == "cgroup" && lists(e.super_options, "cpu");
    });
}

cpu_limit smallest_limit_up_to_mount(const cgroup_mount& mount, std::string_view cgroup_path,
                                     cgroup_version version) {
    const std::optional<std::string_view> relative = relative_to(mount.root, cgroup_path);
    if (!relative)
        return std::nullopt;
    std::vector<std::string_view> levels;
    for (std::string_view name : split(*relative, '/')) {
        if (name == "..")
            return std::nullopt; // outside the cgroup namespace's view: nothing here to read
        if (!name.empty() && name != ".")
            levels.push_back(name);
    }
    cpu_limit smallest;
    for (std::size_t depth = levels.size() + 1; depth-- > 0;) {
        std::string directory = mount.mount_point;
        for (std::size_t i = 0; i < depth; ++i)
            directory.append("/").append(levels[i]);
        smallest = tighter_limit(smallest, limit_in_directory(directory, version));
    }
    return smallest;
}

cpu_limit cgroup_cpu_limit(std::string_view proc_cgroup, std::string_view mountinfo) {
    const cgroup_membership membership = parse_proc_cgroup(proc_cgroup);
    cpu_limit limit;
    if (membership.unified)
        if (const auto mount = find_cgroup2_mount(mountinfo, *membership.unified))
            limit = tighter_limit(
                limit, smallest_limit_up_to_mount(*mount, *membership.unified, cgroup_version::v2));
    if (membership.cpu_controller)
        if (const auto mount = find_cgroup1_cpu_mount(mountinfo, *membership.cpu_controller))
            limit =
                tighter_limit(limit, smallest_limit_up_to_mount(*mount, *membership.cpu_controller,
                                                                cgroup_version::v1));
    return limit;
}

cpu_limit process_cgroup_cpu_limit() noexcept {
    // Only an allocation can throw below; a limit that cannot be read is no limit.
    try {
        const std::optional<std::string> proc_cgroup = read_file("/proc/self/cgroup");
        const std::optional<std::string> mountinfo = read_file("/proc/self/mountinfo");
        if (!proc_cgroup || !mountinfo)
            return std::nullopt;
        return cgroup_cpu_limit(*proc_cgroup, *mountinfo);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::size_t usable_cpus(std::size_t affinity_mask_cpus, cpu_limit limit) noexcept {
    const std::size_t cpus = limit ? std::min(affinity_mask_cpus, *limit) : affinity_mask_cpus;
    return std::max<std::size_t>(cpus, 1);
}

} // namespace fj::detail
