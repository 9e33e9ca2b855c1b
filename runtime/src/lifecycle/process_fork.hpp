// Process fork() safety (process_fork.cpp, docs/design/fork.md).
#pragma once

namespace fj::detail {

// Registers the pthread_atfork handlers, once; called by every scheduler constructor.
void install_fork_handlers();

} // namespace fj::detail
