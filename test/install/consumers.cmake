# Steps shared by the install tests' cmake -P scripts (run_install_test.cmake,
# run_other_linkage_test.cmake). Each step stops the test with FATAL_ERROR when it fails.
# Uses the scripts' inputs: FJ_INSTALL_LIBDIR FJ_CONFIG FJ_GENERATOR FJ_MAKE_PROGRAM
# FJ_CXX_COMPILER FJ_CXX_FLAGS FJ_EXE_LINKER_FLAGS FJ_PKG_CONFIG.

set(fj_consumer_source_dir "${CMAKE_CURRENT_LIST_DIR}")

# `--config` for the build and install commands of multi-config generators.
set(fj_config_args)
if(FJ_CONFIG)
    set(fj_config_args --config "${FJ_CONFIG}")
endif()

# fj_install(<build dir> <prefix>): cmake --install, into a prefix emptied first.
function(fj_install build_dir prefix)
    file(REMOVE_RECURSE "${prefix}")
    message(STATUS "cmake --install ${build_dir} --prefix ${prefix}")
    execute_process(
        COMMAND "${CMAKE_COMMAND}" --install "${build_dir}" --prefix "${prefix}" ${fj_config_args}
        COMMAND_ERROR_IS_FATAL ANY)
endfunction()

# fj_consume_with_find_package(<prefix> <work dir> <out var>): configure and build the CMake
# consumer (CMakeLists.txt here: find_package(forkjoin CONFIG)) against <prefix>; sets <out var>
# to the program built.
function(fj_consume_with_find_package prefix work_dir out_var)
    set(build "${work_dir}/find_package-build")
    file(REMOVE_RECURSE "${build}")
    set(configure_args
        -S "${fj_consumer_source_dir}" -B "${build}" -G "${FJ_GENERATOR}"
        "-DCMAKE_PREFIX_PATH=${prefix}"
        "-DCMAKE_CXX_COMPILER=${FJ_CXX_COMPILER}"
        "-DCMAKE_BUILD_TYPE=${FJ_CONFIG}"
        "-DCMAKE_CXX_FLAGS=${FJ_CXX_FLAGS}"
        "-DCMAKE_EXE_LINKER_FLAGS=${FJ_EXE_LINKER_FLAGS}")
    if(FJ_MAKE_PROGRAM)
        list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${FJ_MAKE_PROGRAM}")
    endif()
    message(STATUS "find_package consumer: configure + build ${fj_consumer_source_dir}")
    execute_process(COMMAND "${CMAKE_COMMAND}" ${configure_args} COMMAND_ERROR_IS_FATAL ANY)
    execute_process(COMMAND "${CMAKE_COMMAND}" --build "${build}" ${fj_config_args}
        COMMAND_ERROR_IS_FATAL ANY)
    # Multi-config generators put the program in a per-config subdirectory.
    find_program(program NAMES install_test PATHS "${build}" "${build}/${FJ_CONFIG}"
        NO_DEFAULT_PATH NO_CACHE REQUIRED)
    set(${out_var} "${program}" PARENT_SCOPE)
endfunction()

# fj_consume_with_pkg_config(<prefix> <work dir> <out var>): compile and link main.cpp with one
# compiler command built from `pkg-config --cflags --libs forkjoin`, the way a Makefile would.
# Only <prefix>'s .pc files are visible (PKG_CONFIG_LIBDIR), so a forkjoin.pc installed elsewhere
# on the machine cannot stand in for this one.
function(fj_consume_with_pkg_config prefix work_dir out_var)
    set(pc_dir "${prefix}/${FJ_INSTALL_LIBDIR}/pkgconfig")
    set(pc_file "${pc_dir}/forkjoin.pc")
    if(NOT EXISTS "${pc_file}")
        message(FATAL_ERROR "pkg-config consumer: ${pc_file} was not installed")
    endif()
    file(READ "${pc_file}" pc_text)
    message(STATUS "pkg-config consumer: ${pc_file}:\n${pc_text}")

    set(ENV{PKG_CONFIG_LIBDIR} "${pc_dir}")
    unset(ENV{PKG_CONFIG_PATH})
    execute_process(COMMAND "${FJ_PKG_CONFIG}" --cflags --libs forkjoin
        OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
    # The .pc must not point back into the source or build tree: everything comes from <prefix>.
    string(FIND "${flags}" "${prefix}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "pkg-config consumer: flags do not point into ${prefix}: ${flags}")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    separate_arguments(cxx_flags UNIX_COMMAND "${FJ_CXX_FLAGS}")
    separate_arguments(link_flags UNIX_COMMAND "${FJ_EXE_LINKER_FLAGS}")

    set(program "${work_dir}/pkg_config-build/install_test")
    file(REMOVE_RECURSE "${work_dir}/pkg_config-build")
    file(MAKE_DIRECTORY "${work_dir}/pkg_config-build")
    set(command "${FJ_CXX_COMPILER}" ${cxx_flags} "${fj_consumer_source_dir}/main.cpp"
        -o "${program}" ${link_flags} ${flags})
    list(JOIN command " " shown)
    message(STATUS "pkg-config consumer: ${shown}")
    execute_process(COMMAND ${command} COMMAND_ERROR_IS_FATAL ANY)
    set(${out_var} "${program}" PARENT_SCOPE)
endfunction()

# fj_run_consumer(<program> <prefix>): pass only if it exits 0 and prints "install ok". The
# prefix's library directory goes on LD_LIBRARY_PATH because a program linked by a plain compiler
# command against a shared libforkjoin has no RPATH to find it (CMake-built ones do).
function(fj_run_consumer program prefix)
    set(library_path "${prefix}/${FJ_INSTALL_LIBDIR}")
    if(DEFINED ENV{LD_LIBRARY_PATH})
        string(APPEND library_path ":$ENV{LD_LIBRARY_PATH}")
    endif()
    message(STATUS "run ${program}")
    execute_process(
        COMMAND "${CMAKE_COMMAND}" -E env "LD_LIBRARY_PATH=${library_path}" "${program}"
        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    message(STATUS "consumer exit code: ${rc}\nstdout: ${out}\nstderr: ${err}")
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "install test: consumer exited with ${rc}")
    endif()
    if(NOT out MATCHES "install ok")
        message(FATAL_ERROR "install test: consumer did not print the expected line")
    endif()
endfunction()
