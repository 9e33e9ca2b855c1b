// BBP hex digits of pi across machines: MPI between processes (ranks), forkjoin within each one
// (docs/distributed.md).
//
// The positions [from, from + digits) are dealt out round-robin: rank r of R computes positions
// from + r, from + r + R, from + r + 2R, ... with fj::parallel_for over its own workers. Position
// d costs O(d log d) (examples/bbp.hpp), so contiguous blocks would leave the last rank with the
// most work, and nothing moves work between ranks once they start; dealt out, every rank gets
// nearly the same cost. Inside a rank the load is still uneven, and stealing balances it.
// Rank 0 gathers the digits (MPI_Gatherv), puts them back in order, and checks them against the
// table (examples/pi_hex_digits.hpp).
//
// Workers per rank: --workers W, else FJ_WORKERS, else the rank's share of its CPUs
// (examples/rank_workers.hpp). Only the main thread calls MPI, and never from inside a task, so
// MPI_THREAD_FUNNELED is the level needed (docs/distributed.md#threads).
//
// Usage: mpirun -n R mpi_bbp_pi [--digits D=1000] [--from P=0] [--workers W]
// Rank 0 prints each rank's worker count and time, then the digits; exits 1 on a wrong digit.
#include "bbp.hpp"
#include "cli.hpp"
#include "pi_digits_check.hpp"
#include "rank_workers.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mpi.h>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

struct arguments {
    std::uint64_t digits = 1000, from = 0, workers = 0; // workers 0: not given
};

arguments parse_arguments(int argc, char** argv) {
    arguments args;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (std::strcmp(argv[i], "--digits") == 0 && has_value)
            args.digits = cli::parse<std::uint64_t>(argv[++i], 1, 1'000'000, "--digits");
        else if (std::strcmp(argv[i], "--from") == 0 && has_value)
            args.from = cli::parse<std::uint64_t>(argv[++i], 0, 10'000'000, "--from");
        else if (std::strcmp(argv[i], "--workers") == 0 && has_value)
            args.workers = cli::parse<std::uint64_t>(
                argv[++i], 1, fj::scheduler_options::max_workers, "--workers");
        else
            cli::usage(std::string("unknown or incomplete option '") + argv[i] + "'");
    }
    return args;
}

// MPI_Init_thread on construction, MPI_Finalize on destruction (after everything declared later
// in main(), the scheduler included, is gone).
class mpi_session {
public:
    mpi_session(int& argc, char**& argv, int required) {
        MPI_Init_thread(&argc, &argv, required, &m_provided);
    }
    ~mpi_session() { MPI_Finalize(); }
    mpi_session(const mpi_session&) = delete;
    mpi_session& operator=(const mpi_session&) = delete;
    int provided() const { return m_provided; }

private:
    int m_provided = MPI_THREAD_SINGLE;
};

const char* thread_level_name(int level) {
    switch (level) {
    case MPI_THREAD_SINGLE:
        return "SINGLE";
    case MPI_THREAD_FUNNELED:
        return "FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "SERIALIZED";
    case MPI_THREAD_MULTIPLE:
        return "MULTIPLE";
    default:
        return "unknown";
    }
}

// Where the workers count came from, as printed.
enum class sizing : std::uint32_t { option, environment, cpu_share };

const char* sizing_name(sizing s) {
    switch (s) {
    case sizing::option:
        return "--workers";
    case sizing::environment:
        return "FJ_WORKERS";
    default:
        return "CPU share";
    }
}

// What each rank tells rank 0 about its part, sent as raw bytes: every rank runs this binary, and
// MPI ranks of one job are assumed to share one architecture (as MPI_BYTE transfers do).
struct rank_report {
    char host[MPI_MAX_PROCESSOR_NAME] = {};
    sizing sized_by = sizing::cpu_share;
    std::uint32_t workers = 0, mask_cpus = 0, sharers = 0;
    std::uint64_t digits = 0;
    double seconds = 0.0;
};

// Positions owned by `rank` of `ranks` among `count`: rank, rank + ranks, ... below count.
std::uint64_t owned_count(std::uint64_t count, std::uint64_t rank, std::uint64_t ranks) {
    return count > rank ? (count - rank + ranks - 1) / ranks : 0;
}

void print_report(int rank, const rank_report& r) {
    std::printf("rank %d on %s: %u worker%s (%s; affinity mask %u CPU%s, %u rank%s on it), %llu "
                "digits in %.3f s\n",
                rank, r.host, r.workers, r.workers == 1 ? "" : "s", sizing_name(r.sized_by),
                r.mask_cpus, r.mask_cpus == 1 ? "" : "s", r.sharers, r.sharers == 1 ? "" : "s",
                static_cast<unsigned long long>(r.digits), r.seconds);
}

// A scheduler of `workers` workers (0: FJ_WORKERS). A malformed FJ_WORKERS ends the whole job
// with the library's message, rather than std::terminate in each rank.
std::unique_ptr<fj::scheduler> make_pool(std::size_t workers) {
    try {
        return std::make_unique<fj::scheduler>(workers);
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "mpi_bbp_pi: %s\n", e.what());
        MPI_Abort(MPI_COMM_WORLD, 2);
        std::abort(); // MPI_Abort does not return; say so to the compiler
    }
}

} // namespace

int main(int argc, char** argv) {
    cli::program() = {"mpi_bbp_pi", "mpirun -n R mpi_bbp_pi [--digits D] [--from P] [--workers W]"};
    // Before MPI: a bad argument makes every rank exit alike (code 2), none left waiting in a
    // collective for a rank that already left.
    const arguments args = parse_arguments(argc, argv);

    // Only this thread calls MPI, and never from inside a task: a task that waits may park on a
    // fiber and resume on another worker thread, so MPI calls from tasks would need
    // MPI_THREAD_MULTIPLE. The scheduler's workers never call MPI.
    const mpi_session mpi(argc, argv, MPI_THREAD_FUNNELED);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (mpi.provided() < MPI_THREAD_FUNNELED) {
        if (rank == 0)
            std::printf("MPI gives thread level %s; this program needs FUNNELED\n",
                        thread_level_name(mpi.provided()));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    rank_report mine;
    const rank_workers::cpu_share share = rank_workers::rank_cpu_share(MPI_COMM_WORLD);
    std::size_t workers = share.workers;
    mine.sized_by = sizing::cpu_share;
    if (args.workers > 0) {
        workers = static_cast<std::size_t>(args.workers);
        mine.sized_by = sizing::option;
    } else if (std::getenv("FJ_WORKERS") != nullptr) {
        workers = 0; // fj::scheduler(0) reads FJ_WORKERS, and throws naming it if it is malformed
        mine.sized_by = sizing::environment;
    }
    const std::unique_ptr<fj::scheduler> pool = make_pool(workers);

    int host_length = 0;
    MPI_Get_processor_name(mine.host, &host_length);
    mine.workers = static_cast<std::uint32_t>(pool->worker_count());
    mine.mask_cpus = static_cast<std::uint32_t>(share.mask_cpus);
    mine.sharers = static_cast<std::uint32_t>(share.sharers);
    mine.digits = owned_count(args.digits, static_cast<std::uint64_t>(rank),
                              static_cast<std::uint64_t>(ranks));

    // Every rank starts together, so the time on rank 0 is the job's time.
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    std::string part(mine.digits, '?');
    const auto stride = static_cast<std::uint64_t>(ranks);
    const std::uint64_t first = args.from + static_cast<std::uint64_t>(rank);
    mine.seconds = cli::seconds([&] {
        fj::parallel_for(*pool, std::uint64_t{0}, mine.digits, [&](std::uint64_t i) {
            part[i] = bbp::hex_char(bbp::hex_digit_of_pi(first + i * stride));
        });
    });

    // Rank 0 learns every part's size, then gathers the parts back to back.
    std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(counts.size());
    const int my_count = static_cast<int>(mine.digits); // --digits is at most 10^6: fits an int
    MPI_Gather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (std::size_t r = 1; r < counts.size(); ++r)
        offsets[r] = offsets[r - 1] + counts[r - 1];
    std::string gathered(rank == 0 ? args.digits : 0, '?');
    MPI_Gatherv(part.data(), my_count, MPI_CHAR, gathered.data(), counts.data(), offsets.data(),
                MPI_CHAR, 0, MPI_COMM_WORLD);
    std::vector<rank_report> reports(static_cast<std::size_t>(ranks));
    MPI_Gather(&mine, sizeof(rank_report), MPI_BYTE, reports.data(), sizeof(rank_report), MPI_BYTE,
               0, MPI_COMM_WORLD);
    const double elapsed = MPI_Wtime() - start;
    if (rank != 0)
        return 0;

    // Undo the round-robin deal: rank r's i-th digit is at offset r + i * ranks.
    std::string digits(args.digits, '?');
    for (std::size_t r = 0; r < counts.size(); ++r)
        for (std::size_t i = 0; i < static_cast<std::size_t>(counts[r]); ++i)
            digits[r + i * counts.size()] = gathered[static_cast<std::size_t>(offsets[r]) + i];

    std::printf("mpi_bbp_pi: %d rank%s, MPI thread level %s\n", ranks, ranks == 1 ? "" : "s",
                thread_level_name(mpi.provided()));
    for (std::size_t r = 0; r < reports.size(); ++r)
        print_report(static_cast<int>(r), reports[r]);
    const std::string shown = digits.substr(0, 32) + (digits.size() > 32 ? "..." : "");
    std::printf("hex digits [%llu, %llu): %s   (%d rank%s, %.3f s)\n",
                static_cast<unsigned long long>(args.from),
                static_cast<unsigned long long>(args.from + args.digits), shown.c_str(), ranks,
                ranks == 1 ? "" : "s", elapsed);
    return pi_table::check_hex_digits(args.from, digits) ? 0 : 1;
}
