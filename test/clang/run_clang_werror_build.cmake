# cmake -P script run by the CTest test build.clang_werror (see test/CMakeLists.txt).
# Inputs (-D): FJ_SOURCE_DIR FJ_WORK_DIR FJ_CLANG_CXX FJ_GENERATOR FJ_MAKE_PROGRAM
# Configures FJ_SOURCE_DIR with FJ_CLANG_CXX, FJ_WERROR=ON and only the library, the examples and
# the header check (test/headers/: each public header alone, with clang's warnings; the test suites
# would double the time and are g++-built in every preset), then builds it. Passes if
# every file compiles and links without a warning. Release, so NDEBUG is on: a variable used only
# in an assert() shows up as unused.
cmake_minimum_required(VERSION 3.25)

# The build dir is kept between runs: ninja recompiles what changed, and a file that failed is
# recompiled every time, so keeping it never hides a warning.
set(build "${FJ_WORK_DIR}/build")

set(configure_args
    -S "${FJ_SOURCE_DIR}" -B "${build}" -G "${FJ_GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${FJ_CLANG_CXX}"
    -DCMAKE_BUILD_TYPE=Release
    -DFJ_WERROR=ON
    -DFJ_BUILD_TESTS=OFF -DFJ_BUILD_EXAMPLES=ON -DFJ_BUILD_PERF=OFF -DFJ_CHECK_HEADERS=ON
    -DFJ_BUILD_DOC_SNIPPETS=OFF
    -DFJ_TEST_INSTALL=OFF -DFJ_TEST_CLANG=OFF)
if(FJ_MAKE_PROGRAM)
    list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${FJ_MAKE_PROGRAM}")
endif()

message(STATUS "configure with ${FJ_CLANG_CXX}")
execute_process(COMMAND "${CMAKE_COMMAND}" ${configure_args} COMMAND_ERROR_IS_FATAL ANY)
# Two jobs: CTest may run this next to other tests on a two-core machine.
message(STATUS "build the library and examples with -Werror")
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${build}" --parallel 2
    COMMAND_ERROR_IS_FATAL ANY)
