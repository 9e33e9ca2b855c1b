#include "platform/thread_name.hpp"

#include <pthread.h>

namespace fj::detail {

void name_this_thread(const char* name) noexcept {
    (void)pthread_setname_np(pthread_self(), name);
}

} // namespace fj::detail
