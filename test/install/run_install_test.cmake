# cmake -P script run by the CTest test install.find_package (see test/CMakeLists.txt).
# Inputs (-D): FJ_BUILD_DIR FJ_CONSUMER_DIR FJ_WORK_DIR FJ_CONFIG FJ_GENERATOR FJ_MAKE_PROGRAM
#              FJ_CXX_COMPILER FJ_CXX_FLAGS FJ_EXE_LINKER_FLAGS
# Steps: 1. install FJ_BUILD_DIR into FJ_WORK_DIR/prefix
#        2. configure + build FJ_CONSUMER_DIR in FJ_WORK_DIR/build with CMAKE_PREFIX_PATH=prefix
#        3. run it; pass only if it exits 0 and prints "install ok"
cmake_minimum_required(VERSION 3.25)

set(prefix "${FJ_WORK_DIR}/prefix")
set(build "${FJ_WORK_DIR}/build")
file(REMOVE_RECURSE "${FJ_WORK_DIR}")

set(config_args)
if(FJ_CONFIG)
    set(config_args --config "${FJ_CONFIG}")
endif()

message(STATUS "[1/3] cmake --install ${FJ_BUILD_DIR} --prefix ${prefix}")
execute_process(
    COMMAND "${CMAKE_COMMAND}" --install "${FJ_BUILD_DIR}" --prefix "${prefix}" ${config_args}
    COMMAND_ERROR_IS_FATAL ANY)

set(configure_args
    -S "${FJ_CONSUMER_DIR}" -B "${build}" -G "${FJ_GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}"
    "-DCMAKE_CXX_COMPILER=${FJ_CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${FJ_CONFIG}"
    "-DCMAKE_CXX_FLAGS=${FJ_CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${FJ_EXE_LINKER_FLAGS}")
if(FJ_MAKE_PROGRAM)
    list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${FJ_MAKE_PROGRAM}")
endif()

message(STATUS "[2/3] configure + build ${FJ_CONSUMER_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" ${configure_args} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${build}" ${config_args}
    COMMAND_ERROR_IS_FATAL ANY)

# Multi-config generators put the program in a per-config subdirectory.
find_program(consumer NAMES install_test PATHS "${build}" "${build}/${FJ_CONFIG}"
    NO_DEFAULT_PATH NO_CACHE REQUIRED)

message(STATUS "[3/3] run ${consumer}")
execute_process(COMMAND "${consumer}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "consumer exit code: ${rc}\nstdout: ${out}\nstderr: ${err}")
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: consumer exited with ${rc}")
endif()
if(NOT out MATCHES "install ok")
    message(FATAL_ERROR "install test: consumer did not print the expected line")
endif()
