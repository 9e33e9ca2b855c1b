#include "platform/thread_state.hpp"

#include <cstdio>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace fj::detail {

pid_t current_thread_id() noexcept {
    return static_cast<pid_t>(::syscall(SYS_gettid));
}

kernel_thread_state parse_thread_stat(std::string_view line) noexcept {
    const std::size_t close = line.rfind(')');
    if (close == std::string_view::npos || close + 2 >= line.size() || line[close + 1] != ' ')
        return kernel_thread_state::other;
    switch (line[close + 2]) {
    case 'R':
        return kernel_thread_state::running;
    case 'S':
    case 'D':
        return kernel_thread_state::blocked;
    default:
        return kernel_thread_state::other;
    }
}

kernel_thread_state read_thread_state(pid_t tid) noexcept {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", static_cast<int>(tid));
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kernel_thread_state::other;
    // The name is at most 16 bytes: the state is within the first hundred.
    char text[128];
    const ssize_t got = ::read(fd, text, sizeof text);
    ::close(fd);
    if (got <= 0)
        return kernel_thread_state::other;
    return parse_thread_stat(std::string_view(text, static_cast<std::size_t>(got)));
}

} // namespace fj::detail
