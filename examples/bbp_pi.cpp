// pi two ways with the Bailey-Borwein-Plouffe formula (examples/bbp.hpp):
//
//   (a) the series, as a deterministic fj::parallel_reduce over its terms;
//   (b) BBP digit extraction: the hexadecimal digits of pi at positions [from, from + digits),
//       each computed on its own by fj::parallel_for. Later positions cost more, so the load is
//       uneven and only balances by stealing. The digits are checked against a table computed by
//       an independent method (examples/pi_hex_digits.hpp, 10,000 digits).
//
// Usage: bbp_pi [--terms N=10000000] [--digits D=1000] [--from P=0] [--workers W]
// Prints each result, the parallel and serial times and the speed-up; exits 1 on a wrong answer.
#include "bbp.hpp"
#include "cli.hpp"
#include "pi_digits_check.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

bool series(fj::scheduler& pool, std::uint64_t terms) {
    double parallel = 0.0, serial = 0.0;
    const double t_parallel = cli::seconds([&] {
        parallel = fj::parallel_reduce(
            pool, std::uint64_t{0}, terms, 0.0,
            // A lambda, not the function itself: a function reference is called indirectly per
            // term (the leaf is not inlined into this frame), about 10% slower (perf/README.md).
            [](std::uint64_t k) { return bbp::series_term(k); }, std::plus<>{});
    });
    const double t_serial = cli::seconds([&] {
        for (std::uint64_t k = 0; k < terms; ++k)
            serial += bbp::series_term(k);
    });
    std::printf("series: pi = %.15f   (%llu terms; parallel_reduce %.3f s, serial %.3f s, "
                "speed-up %.2fx)\n",
                parallel, static_cast<unsigned long long>(terms), t_parallel, t_serial,
                t_serial / t_parallel);
    if (std::fabs(parallel - M_PI) > 4e-16 || std::fabs(serial - M_PI) > 4e-16) {
        std::printf("WRONG: parallel %.17g, serial %.17g, pi %.17g\n", parallel, serial, M_PI);
        return false;
    }
    return true;
}

bool digits(fj::scheduler& pool, std::uint64_t from, std::uint64_t count) {
    std::string parallel(count, '?'), serial(count, '?');
    const double t_parallel = cli::seconds([&] {
        fj::parallel_for(pool, std::uint64_t{0}, count, [&](std::uint64_t i) {
            parallel[i] = bbp::hex_char(bbp::hex_digit_of_pi(from + i));
        });
    });
    const double t_serial = cli::seconds([&] {
        for (std::uint64_t i = 0; i < count; ++i)
            serial[i] = bbp::hex_char(bbp::hex_digit_of_pi(from + i));
    });
    const std::string shown = parallel.substr(0, 32) + (count > 32 ? "..." : "");
    std::printf("hex digits [%llu, %llu): %s   (parallel_for %.3f s, serial %.3f s, speed-up "
                "%.2fx)\n",
                static_cast<unsigned long long>(from),
                static_cast<unsigned long long>(from + count), shown.c_str(), t_parallel, t_serial,
                t_serial / t_parallel);
    if (parallel != serial) {
        std::printf("WRONG: parallel and serial digits differ\n");
        return false;
    }
    return pi_table::check_hex_digits(from, parallel);
}

} // namespace

int main(int argc, char** argv) {
    cli::program() = {"bbp_pi", "bbp_pi [--terms N] [--digits D] [--from P] [--workers W]"};
    std::uint64_t terms = 10'000'000, count = 1000, from = 0, workers = 0;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (std::strcmp(argv[i], "--terms") == 0 && has_value)
            terms = cli::parse<std::uint64_t>(argv[++i], 1, 1ull << 40, "--terms");
        else if (std::strcmp(argv[i], "--digits") == 0 && has_value)
            count = cli::parse<std::uint64_t>(argv[++i], 1, 1'000'000, "--digits");
        else if (std::strcmp(argv[i], "--from") == 0 && has_value)
            from = cli::parse<std::uint64_t>(argv[++i], 0, 10'000'000, "--from");
        else if (std::strcmp(argv[i], "--workers") == 0 && has_value)
            workers = cli::parse<std::uint64_t>(argv[++i], 1, fj::scheduler_options::max_workers,
                                                "--workers");
        else
            cli::usage(std::string("unknown or incomplete option '") + argv[i] + "'");
    }

    std::unique_ptr<fj::scheduler> own;
    if (workers > 0)
        own = std::make_unique<fj::scheduler>(static_cast<std::size_t>(workers));
    fj::scheduler& pool = own ? *own : fj::default_scheduler();
    std::printf("workers %zu\n", pool.worker_count());

    const bool ok = series(pool, terms) && digits(pool, from, count);
    return ok ? 0 : 1;
}
