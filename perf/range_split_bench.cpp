// How far each runtime splits a loop by default, and what an affinity partitioner keeps across
// calls (range_split_workload.hpp, docs/performance-algorithms.md#partitioners):
//
//   overlay  oneTBB's polygon-overlay shape: a custom range over the first of two rectangle maps,
//            an imperative reduction body; fj::parallel_reduce(range, body) with no partitioner
//            against tbb::parallel_reduce(range, body) (auto_partitioner) and one body run
//            serially. Prints the pieces each runtime handed to bodies.
//   stencil  oneTBB's seismic shape: frames of a 1-D wave stencil, each a parallel_for over a
//            blocked_range, with an affinity partitioner kept across frames (fj's and oneTBB's)
//            and with each runtime's default, against the serial frames. Prints ms per frame.
//
//   range_split_bench [--rounds 11] [--workers 1,2] [--only overlay,stencil] [--rects 2000]
//                     [--second 2000] [--cells 262144] [--frames 50] [--repeat 10]
//
// Rounds are paired: each round runs every row once, the order rotating, each on a pool that
// lives for the whole worker count; a row's time in a round is the mean of --repeat overlays, or
// of --repeat runs of --frames frames. Ratios are per round (median and range). Every overlay's
// area and every stencil field (checked after each round) must equal the serial one exactly:
// otherwise the program ends with status 1.
#include "driver_cli.hpp"
#include "measure.hpp"
#include "paired_rounds.hpp"
#include "range_split_workload.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using namespace fj_perf::range_split;

// --- forkjoin's rows and the serial references ---------------------------------------------------

// One pool of `workers` for every fj row alive at once, as a program has one: a second pool
// would be idle-spinning beside the first after each row.
std::shared_ptr<fj::scheduler> fj_pool(int workers) {
    static std::weak_ptr<fj::scheduler> last;
    static int last_workers = 0;
    std::shared_ptr<fj::scheduler> pool = last.lock();
    if (!pool || last_workers != workers) {
        pool = std::make_shared<fj::scheduler>(static_cast<std::size_t>(workers));
        last = pool;
        last_workers = workers;
    }
    return pool;
}

overlay_runner make_fj_overlay(int workers) {
    auto pool = fj_pool(workers);
    return [pool](const overlay_input& in) {
        overlay_body<fj::split> body;
        fj::parallel_reduce(*pool, overlay_range<fj::split>(in.first, in.second), body);
        return result_of(body);
    };
}

overlay_runner make_serial_overlay(int) {
    return [](const overlay_input& in) {
        overlay_body<fj::split> body;
        body(overlay_range<fj::split>(in.first, in.second));
        return result_of(body);
    };
}

// Frames over the field, each an fj::parallel_for on `pool` with the trailing options given.
template <class... Partitioner>
void fj_frames(fj::scheduler& pool, stencil_field& f, int count, Partitioner&... partitioner) {
    const std::size_t cells = f.current.size();
    for (int t = 0; t < count; ++t) {
        const float* previous = f.previous.data();
        const float* current = f.current.data();
        float* next = f.next.data();
        const stencil_field* field = &f;
        fj::parallel_for(
            pool, fj::blocked_range<std::size_t>{0, cells},
            [=](const fj::blocked_range<std::size_t>& r) {
                field->count_piece();
                stencil_cells(previous, current, next, cells, r.begin(), r.end());
            },
            partitioner...);
        f.rotate();
    }
}

stencil_runner make_fj_affinity(int workers) {
    auto pool = fj_pool(workers);
    auto ap = std::make_shared<fj::affinity_partitioner>();
    return [pool, ap](stencil_field& f, int count) {
        pool->execute([&] { fj_frames(*pool, f, count, *ap); });
    };
}

stencil_runner make_fj_stencil(int workers) {
    auto pool = fj_pool(workers);
    return
        [pool](stencil_field& f, int count) { pool->execute([&] { fj_frames(*pool, f, count); }); };
}

stencil_runner make_serial_stencil(int) {
    return [](stencil_field& f, int count) {
        const std::size_t cells = f.current.size();
        for (int t = 0; t < count; ++t) {
            f.count_piece();
            stencil_cells(f.previous.data(), f.current.data(), f.next.data(), cells, 0, cells);
            f.rotate();
        }
    };
}

const overlay_registrar reg_fj_overlay{{"fj", &make_fj_overlay}};
const stencil_registrar reg_fj_affinity{{"fj affinity", &make_fj_affinity}};
const stencil_registrar reg_fj_stencil{{"fj", &make_fj_stencil}};

// --- the driver ----------------------------------------------------------------------------------

struct options {
    int rounds = 11;
    int repeat = 10;
    std::vector<int> workers{1, 2};
    bool overlay = true;
    bool stencil = true;
    int rects = 2000;
    int second = 2000;
    int cells = 1 << 18;
    int frames = 50;
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli("range_split_bench",
                                  "[--rounds 11] [--workers 1,2] [--only overlay,stencil] "
                                  "[--rects 2000] [--second 2000] [--cells 262144] [--frames 50] "
                                  "[--repeat 10]",
                                  argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--rounds")
            o.rounds = cli.integer(value, 1, name);
        else if (name == "--repeat")
            o.repeat = cli.integer(value, 1, name);
        else if (name == "--workers")
            o.workers = cli.integers(value, 1, name);
        else if (name == "--rects")
            o.rects = cli.integer(value, 1, name);
        else if (name == "--second")
            o.second = cli.integer(value, 1, name);
        else if (name == "--cells")
            o.cells = cli.integer(value, 3, name);
        else if (name == "--frames")
            o.frames = cli.integer(value, 1, name);
        else if (name == "--only") {
            o.overlay = o.stencil = false;
            for (const auto& part : fj_perf::split(value)) {
                if (part == "overlay")
                    o.overlay = true;
                else if (part == "stencil")
                    o.stencil = true;
                else
                    cli.fail("unknown part '" + part + "' (overlay, stencil)");
            }
        } else
            cli.fail("unknown option " + name);
    });
    return o;
}

void print_table_head(int w, const char* unit, const char* extra) {
    fj_perf::print_workers_label(w);
    std::printf("%10s %21s %s\n", unit, "[range]", extra);
}

// false if an overlay found another area than the serial one.
bool run_overlay(const options& o) {
    overlay_input in{make_map(static_cast<std::size_t>(o.rects), 1),
                     make_map(static_cast<std::size_t>(o.second), 2)};
    const overlay_result expected = make_serial_overlay(1)(in);
    std::printf("\noverlay: %d x %d rectangles, pieces of at most %zu rectangles of the first map, "
                "total intersection area %lld\n",
                o.rects, o.second, k_overlay_leaf, static_cast<long long>(expected.area));
    fj_perf::interference_meter meter;
    bool ok = true;
    for (const int w : o.workers) {
        const auto all = fj_perf::rows_with_serial(
            overlay_competitor{"serial", &make_serial_overlay}, overlay_competitors());
        auto runs = fj_perf::runners_of(all, w);
        std::vector<std::vector<double>> ms(all.size()), pieces(all.size()), bodies(all.size());
        for (auto& run : runs) // warm up every pool once
            (void)run(in);
        for (int r = 0; r < o.rounds; ++r) {
            fj_perf::for_each_row_rotated(r, all.size(), [&](std::size_t i) {
                const auto t = fj_perf::timed_repeats(o.repeat, [&] { return runs[i](in); });
                ms[i].push_back(t.mean_ms);
                for (const auto& g : t.results) {
                    if (g.area != expected.area) {
                        std::printf("  WRONG: %s at %d workers found area %lld, serial %lld\n",
                                    all[i].name.c_str(), w, static_cast<long long>(g.area),
                                    static_cast<long long>(expected.area));
                        ok = false;
                    }
                    pieces[i].push_back(static_cast<double>(g.pieces));
                    bodies[i].push_back(static_cast<double>(g.bodies));
                }
            });
        }
        print_table_head(w, "median ms", "   pieces [range]     bodies");
        for (std::size_t i = 0; i < all.size(); ++i) {
            const fj_perf::spread t = fj_perf::spread_of(ms[i]);
            const fj_perf::spread p = fj_perf::spread_of(pieces[i]);
            std::printf("  %-19s %10.3f [%8.3f-%10.3f] %6.0f [%4.0f-%4.0f] %6.0f\n",
                        all[i].name.c_str(), t.median, t.lo, t.hi, p.median, p.lo, p.hi,
                        fj_perf::median(bodies[i]));
        }
        fj_perf::print_paired_ratios(fj_perf::names_of(all), ms);
    }
    meter.report("overlay");
    return ok;
}

bool same_field(const stencil_field& a, const stencil_field& b) {
    const auto same = [](const std::vector<float>& x, const std::vector<float>& y) {
        return x.size() == y.size() &&
               std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
    };
    return same(a.previous, b.previous) && same(a.current, b.current);
}

// false if a runtime's field differs from the serial one after a round.
bool run_stencil(const options& o) {
    const auto cells = static_cast<std::size_t>(o.cells);
    std::printf("\nstencil: %zu cells (3 arrays of %.2f MiB), %d frames a run, %d runs a round\n",
                cells, static_cast<double>(cells * sizeof(float)) / (1 << 20), o.frames, o.repeat);
    fj_perf::interference_meter meter;
    bool ok = true;
    for (const int w : o.workers) {
        const auto all = fj_perf::rows_with_serial(
            stencil_competitor{"serial", &make_serial_stencil}, stencil_competitors());
        auto runs = fj_perf::runners_of(all, w);
        // Each row evolves its own field by the same frames, round after round.
        std::vector<stencil_field> fields;
        for (std::size_t i = 0; i < all.size(); ++i)
            fields.emplace_back(cells);
        std::vector<std::vector<double>> ms(all.size());
        for (std::size_t i = 0; i < all.size(); ++i) // warm up every pool and partitioner
            runs[i](fields[i], o.frames);
        for (int r = 0; r < o.rounds; ++r) {
            fj_perf::for_each_row_rotated(r, all.size(), [&](std::size_t i) {
                const double seconds = fj_perf::seconds_of([&] {
                    for (int rep = 0; rep < o.repeat; ++rep)
                        runs[i](fields[i], o.frames);
                });
                ms[i].push_back(seconds * 1e3 / (o.repeat * o.frames));
            });
            for (std::size_t i = 1; i < all.size(); ++i) {
                if (!same_field(fields[i], fields[0])) {
                    std::printf("  WRONG: %s at %d workers: the field differs from the serial one "
                                "after round %d\n",
                                all[i].name.c_str(), w, r);
                    ok = false;
                }
            }
        }
        // One more run each, untimed, counting the pieces (every row advances its field by the
        // same frames, so the fields stay comparable).
        std::vector<double> pieces(all.size());
        for (std::size_t i = 0; i < all.size(); ++i) {
            std::atomic<long> count{0};
            fields[i].pieces = &count;
            runs[i](fields[i], o.frames);
            fields[i].pieces = nullptr;
            pieces[i] = static_cast<double>(count.load()) / o.frames;
        }
        for (std::size_t i = 1; i < all.size(); ++i) {
            if (!same_field(fields[i], fields[0])) {
                std::printf("  WRONG: %s at %d workers: the field differs from the serial one\n",
                            all[i].name.c_str(), w);
                ok = false;
            }
        }
        print_table_head(w, "ms/frame", "pieces/frame");
        for (std::size_t i = 0; i < all.size(); ++i) {
            const fj_perf::spread t = fj_perf::spread_of(ms[i]);
            std::printf("  %-19s %10.4f [%8.4f-%10.4f] %12.1f\n", all[i].name.c_str(), t.median,
                        t.lo, t.hi, pieces[i]);
        }
        fj_perf::print_paired_ratios(fj_perf::names_of(all), ms);
    }
    meter.report("stencil");
    return ok;
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("range_split_bench: %d paired rounds, load %s\n", o.rounds,
                fj_perf::load_average().c_str());
    bool ok = true;
    if (o.overlay)
        ok = run_overlay(o) && ok;
    if (o.stencil)
        ok = run_stencil(o) && ok;
    std::printf("load after: %s\n", fj_perf::load_average().c_str());
    if (!ok) {
        std::printf("range_split_bench: a result differs from the serial one\n");
        return 1;
    }
}
