# cmake -P script run by the CTest test valgrind.fj_valgrind_build (see valgrind.cmake).
# Inputs (-D): FJ_SOURCE_DIR FJ_BUILD_DIR FJ_GENERATOR FJ_MAKE_PROGRAM FJ_CXX_COMPILER FJ_CXX_FLAGS
#              FJ_PREFIX_PATH FJ_VALGRIND_EXECUTABLE FJ_CTEST
#              FJ_TARGETS (the examples to build, "|"-separated; FJ_PREFIX_PATH likewise)
# Steps: 1. configure FJ_SOURCE_DIR in FJ_BUILD_DIR with FJ_VALGRIND=ON, examples only
#        2. build the runtime and FJ_TARGETS there
#        3. run that build's valgrind.*.parking_on tests; fail if any fails or none exists
# The build directory is kept, so a second run only rebuilds what changed.
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" targets "${FJ_TARGETS}")
string(REPLACE "|" ";" prefix_path "${FJ_PREFIX_PATH}")

# RelWithDebInfo (-O2 -g): optimised like the release build, with file:line in memcheck's reports.
set(configure_args
    -S "${FJ_SOURCE_DIR}" -B "${FJ_BUILD_DIR}" -G "${FJ_GENERATOR}"
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
    "-DCMAKE_CXX_COMPILER=${FJ_CXX_COMPILER}"
    "-DCMAKE_CXX_FLAGS=${FJ_CXX_FLAGS}"
    "-DCMAKE_PREFIX_PATH=${prefix_path}"
    "-DFJ_VALGRIND_EXECUTABLE=${FJ_VALGRIND_EXECUTABLE}"
    -DFJ_VALGRIND=ON
    -DFJ_BUILD_EXAMPLES=ON
    -DFJ_BUILD_TESTS=OFF
    -DFJ_BUILD_DOC_SNIPPETS=OFF
    -DFJ_BUILD_PERF=OFF
    -DFJ_TEST_INSTALL=OFF)
if(FJ_MAKE_PROGRAM)
    list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${FJ_MAKE_PROGRAM}")
endif()

message(STATUS "[1/3] configure ${FJ_BUILD_DIR} with FJ_VALGRIND=ON")
execute_process(COMMAND "${CMAKE_COMMAND}" ${configure_args} COMMAND_ERROR_IS_FATAL ANY)

message(STATUS "[2/3] build ${targets}")
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${FJ_BUILD_DIR}" -j 2 --target ${targets}
    COMMAND_ERROR_IS_FATAL ANY)

message(STATUS "[3/3] memcheck with parking on")
execute_process(
    COMMAND "${FJ_CTEST}" --test-dir "${FJ_BUILD_DIR}" -L valgrind -R "\\.parking_on$"
            -j 2 --output-on-failure --no-tests=error
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "valgrind.fj_valgrind_build: a memcheck run with parking on failed "
                        "(its output is above; the build is in ${FJ_BUILD_DIR})")
endif()
