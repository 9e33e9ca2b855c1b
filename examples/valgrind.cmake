# Memcheck runs of the examples (CTest label "valgrind"; docs/reliability.md#valgrind): no leaks,
# no invalid accesses, in both parking modes. Included by examples/CMakeLists.txt.
#
#   valgrind.<example>.parking_off  FJ_PARKING=0: no fibers, every task runs on its worker's own
#                                   thread stack, which memcheck follows exactly. Every build.
#   valgrind.<example>.parking_on   the default: worker loops and parked tasks run on fiber
#                                   stacks. Only in FJ_VALGRIND=ON builds, where every fiber stack
#                                   is registered with valgrind; without that, memcheck guesses
#                                   from the size of each stack-pointer jump whether it is a
#                                   switch ("client switching stacks?").
#   valgrind.fj_valgrind_build      only in builds without FJ_VALGRIND (the release preset, whose
#                                   library must not pay for the option): configures and builds
#                                   the examples with FJ_VALGRIND=ON in <build>/valgrind-build and
#                                   runs their parking_on tests there (run_fj_valgrind_build.cmake).
#
# Not in sanitizer builds: ASan and TSan binaries do not run under valgrind (both reserve shadow
# memory that valgrind cannot give them).
find_program(FJ_VALGRIND_EXECUTABLE valgrind)
if(NOT FJ_VALGRIND_EXECUTABLE)
    message(STATUS "forkjoin: valgrind not found; skipping the valgrind tests "
                   "(apt-get install valgrind)")
    return()
endif()
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
    return()
endif()

# --error-exitcode=1: any memcheck error (invalid read or write, use of an uninitialised value,
# bad free) fails the test through the exit code. --leak-check=full with
# --errors-for-leak-kinds=definite,indirect: a block no pointer reaches any more, or one reached
# only from such a block, counts as an error too. "Possibly lost" (reached only through an
# interior pointer) and "still reachable" (live at exit) are reported, not errors. No
# suppressions: none is needed.
set(fj_memcheck
    "${FJ_VALGRIND_EXECUTABLE}" --tool=memcheck --error-exitcode=1 --leak-check=full
    --errors-for-leak-kinds=definite,indirect)

# fj_add_valgrind_test(<example> <args...>) for an example target of this directory. The smallest
# arguments of each: memcheck's start-up (~2 s) dominates, and it runs one thread at a time.
# No PASS_REGULAR_EXPRESSION, as that would make CTest ignore the exit code; each example exits 1
# when its answer is wrong. The FAIL expression catches a fiber switch memcheck was not told
# about, i.e. an FJ_VALGRIND build that does not register its stacks, or fibers with parking off.
function(fj_add_valgrind_test example)
    set(modes parking_off)
    if(FJ_VALGRIND)
        list(APPEND modes parking_on)
    endif()
    foreach(mode IN LISTS modes)
        if(mode STREQUAL "parking_on")
            set(parking 1)
        else()
            set(parking 0)
        endif()
        add_test(NAME valgrind.${example}.${mode}
            COMMAND ${fj_memcheck} $<TARGET_FILE:${example}> ${ARGN})
        set_tests_properties(valgrind.${example}.${mode} PROPERTIES
            ENVIRONMENT "FJ_WORKERS=2;FJ_PARKING=${parking}"
            FAIL_REGULAR_EXPRESSION "client switching stacks"
            LABELS valgrind
            TIMEOUT 300)
    endforeach()
endfunction()

fj_add_valgrind_test(fib 20 --workers 2)
fj_add_valgrind_test(bbp_pi --terms 1000 --digits 100 --workers 2)
fj_add_valgrind_test(async_vs_std --tasks 20 --depth 3 --workers 2)
fj_add_valgrind_test(merge_sort 20000 --workers 2)
fj_add_valgrind_test(nqueens 8 --workers 2)
fj_add_valgrind_test(uts T3S --workers 2)
set(fj_valgrind_examples fib bbp_pi async_vs_std merge_sort nqueens uts)

if(NOT FJ_VALGRIND)
    # Lists cross the command line with "|" for ";" (the script turns them back).
    string(REPLACE ";" "|" fj_targets "${fj_valgrind_examples}")
    string(REPLACE ";" "|" fj_prefix_path "${CMAKE_PREFIX_PATH}")
    add_test(NAME valgrind.fj_valgrind_build
        COMMAND "${CMAKE_COMMAND}"
            "-DFJ_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
            "-DFJ_BUILD_DIR=${CMAKE_BINARY_DIR}/valgrind-build"
            "-DFJ_GENERATOR=${CMAKE_GENERATOR}"
            "-DFJ_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
            "-DFJ_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
            "-DFJ_CXX_FLAGS=${CMAKE_CXX_FLAGS}"
            "-DFJ_PREFIX_PATH=${fj_prefix_path}"
            "-DFJ_VALGRIND_EXECUTABLE=${FJ_VALGRIND_EXECUTABLE}"
            "-DFJ_TARGETS=${fj_targets}"
            "-DFJ_CTEST=${CMAKE_CTEST_COMMAND}"
            -P "${CMAKE_CURRENT_SOURCE_DIR}/run_fj_valgrind_build.cmake")
    # It builds with two jobs and runs two memcheck tests at once: count it as two.
    set_tests_properties(valgrind.fj_valgrind_build PROPERTIES
        LABELS valgrind
        PROCESSORS 2
        TIMEOUT 1200)
endif()
