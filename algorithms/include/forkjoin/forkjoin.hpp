// Umbrella header: the whole public API of forkjoin.
#pragma once

#include <forkjoin/async.hpp>
#include <forkjoin/errors.hpp>
#include <forkjoin/future.hpp>
#include <forkjoin/options.hpp>
#include <forkjoin/scheduler.hpp>
#include <forkjoin/stats.hpp>
