# cmake -P script run by the CTest test install.shared_library (or install.static_library when
# the enclosing build is shared): the enclosing build proves one kind of library, this proves the
# other, so both are installed and consumed in every run of the install tests.
# Inputs (-D): FJ_SOURCE_DIR FJ_WORK_DIR FJ_BUILD_SHARED_LIBS FJ_WERROR, and those listed in
#              consumers.cmake
# Steps: 1. configure + build only the library (no tests, examples or benchmarks) with
#           BUILD_SHARED_LIBS=FJ_BUILD_SHARED_LIBS, and install it into FJ_WORK_DIR/prefix
#        2. build and run the find_package consumer against it
#        3. build and run the pkg-config consumer against it
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/consumers.cmake")

# The library build dir is kept between runs: ninja rebuilds what changed, so a re-run after a
# small edit costs seconds instead of a full library build. Everything else starts empty.
set(build "${FJ_WORK_DIR}/library-build")
set(prefix "${FJ_WORK_DIR}/prefix")

message(STATUS "[1/3] build the library with BUILD_SHARED_LIBS=${FJ_BUILD_SHARED_LIBS}, install")
set(configure_args
    -S "${FJ_SOURCE_DIR}" -B "${build}" -G "${FJ_GENERATOR}"
    "-DBUILD_SHARED_LIBS=${FJ_BUILD_SHARED_LIBS}"
    "-DCMAKE_CXX_COMPILER=${FJ_CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${FJ_CONFIG}"
    "-DCMAKE_CXX_FLAGS=${FJ_CXX_FLAGS}"
    "-DCMAKE_SHARED_LINKER_FLAGS=${FJ_SHARED_LINKER_FLAGS}"
    "-DFJ_WERROR=${FJ_WERROR}"
    -DFJ_BUILD_TESTS=OFF -DFJ_BUILD_EXAMPLES=OFF -DFJ_BUILD_PERF=OFF)
if(FJ_MAKE_PROGRAM)
    list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${FJ_MAKE_PROGRAM}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" ${configure_args} COMMAND_ERROR_IS_FATAL ANY)
# Two jobs: CTest may run this next to other tests on a two-core machine.
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${build}" --parallel 2 ${fj_config_args}
    COMMAND_ERROR_IS_FATAL ANY)
fj_install("${build}" "${prefix}")
# The consumers below would pass with either kind of library, so check that the kind asked for is
# the kind installed.
if(FJ_BUILD_SHARED_LIBS)
    set(library "${prefix}/${FJ_INSTALL_LIBDIR}/libforkjoin.so")
else()
    set(library "${prefix}/${FJ_INSTALL_LIBDIR}/libforkjoin.a")
endif()
if(NOT EXISTS "${library}")
    message(FATAL_ERROR "BUILD_SHARED_LIBS=${FJ_BUILD_SHARED_LIBS} did not install ${library}")
endif()

message(STATUS "[2/3] find_package consumer")
fj_consume_with_find_package("${prefix}" "${FJ_WORK_DIR}" program)
fj_run_consumer("${program}" "${prefix}")

message(STATUS "[3/3] pkg-config consumer")
fj_consume_with_pkg_config("${prefix}" "${FJ_WORK_DIR}" program)
fj_run_consumer("${program}" "${prefix}")
