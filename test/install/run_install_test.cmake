# cmake -P script run by the CTest tests install.find_package and install.pkg_config
# (see test/CMakeLists.txt).
# Inputs (-D): FJ_BUILD_DIR FJ_WORK_DIR FJ_CONSUMER (find_package or pkg_config), and those
#              listed in consumers.cmake
# Steps: 1. install FJ_BUILD_DIR into FJ_WORK_DIR/prefix
#        2. build the consumer against that prefix: the CMake project here through
#           find_package(forkjoin CONFIG), or main.cpp with the flags pkg-config reads from
#           forkjoin.pc
#        3. run it; pass only if it exits 0 and prints "install ok"
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/consumers.cmake")

file(REMOVE_RECURSE "${FJ_WORK_DIR}")
set(prefix "${FJ_WORK_DIR}/prefix")

message(STATUS "[1/3] install")
fj_install("${FJ_BUILD_DIR}" "${prefix}")

message(STATUS "[2/3] build the ${FJ_CONSUMER} consumer")
if(FJ_CONSUMER STREQUAL "find_package")
    fj_consume_with_find_package("${prefix}" "${FJ_WORK_DIR}" program)
elseif(FJ_CONSUMER STREQUAL "pkg_config")
    fj_consume_with_pkg_config("${prefix}" "${FJ_WORK_DIR}" program)
else()
    message(FATAL_ERROR "FJ_CONSUMER must be find_package or pkg_config, not '${FJ_CONSUMER}'")
endif()

message(STATUS "[3/3] run")
fj_run_consumer("${program}" "${prefix}")
