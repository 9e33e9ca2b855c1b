// Umbrella header: the whole public API of forkjoin.
#pragma once

#include <forkjoin/async.hpp>
#include <forkjoin/blocked_range.hpp>
#include <forkjoin/blocked_range2d.hpp>
#include <forkjoin/blocked_range3d.hpp>
#include <forkjoin/blocking.hpp>
#include <forkjoin/errors.hpp>
#include <forkjoin/future.hpp>
#include <forkjoin/grain.hpp>
#include <forkjoin/options.hpp>
#include <forkjoin/parallel_for.hpp>
#include <forkjoin/parallel_invoke.hpp>
#include <forkjoin/parallel_pipeline.hpp>
#include <forkjoin/parallel_reduce.hpp>
#include <forkjoin/profile.hpp>
#include <forkjoin/promise.hpp>
#include <forkjoin/range.hpp>
#include <forkjoin/scheduler.hpp>
#include <forkjoin/shared_future.hpp>
#include <forkjoin/stats.hpp>
#include <forkjoin/task_group.hpp>
#include <forkjoin/when_all.hpp>
#include <forkjoin/when_any.hpp>
