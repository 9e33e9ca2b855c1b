# Install rules: `cmake --install <build> --prefix <p>` gives <p>/include/forkjoin/...,
# the runtime library, and <p>/lib/cmake/forkjoin/ so that consumers can write
#     find_package(forkjoin CONFIG REQUIRED)
#     target_link_libraries(app PRIVATE forkjoin::forkjoin)
# and <p>/lib/pkgconfig/forkjoin.pc for `pkg-config --cflags --libs forkjoin`.
# test/install/ holds the consumers that prove both (CTest label "install").
include(CMakePackageConfigHelpers)

set(fj_install_cmakedir "${CMAKE_INSTALL_LIBDIR}/cmake/forkjoin")

install(TARGETS forkjoin_runtime forkjoin_algorithms forkjoin
    EXPORT forkjoinTargets
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")

# Both include trees merge into one include/ (runtime and algorithms headers share forkjoin/).
install(DIRECTORY
        "${PROJECT_SOURCE_DIR}/runtime/include/"
        "${PROJECT_SOURCE_DIR}/algorithms/include/"
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

install(EXPORT forkjoinTargets
    NAMESPACE forkjoin::
    DESTINATION "${fj_install_cmakedir}")

configure_package_config_file(
    "${PROJECT_SOURCE_DIR}/cmake/forkjoinConfig.cmake.in"
    "${PROJECT_BINARY_DIR}/forkjoinConfig.cmake"
    INSTALL_DESTINATION "${fj_install_cmakedir}")

write_basic_package_version_file(
    "${PROJECT_BINARY_DIR}/forkjoinConfigVersion.cmake"
    VERSION "${PROJECT_VERSION}"
    COMPATIBILITY SameMajorVersion)

install(FILES
        "${PROJECT_BINARY_DIR}/forkjoinConfig.cmake"
        "${PROJECT_BINARY_DIR}/forkjoinConfigVersion.cmake"
    DESTINATION "${fj_install_cmakedir}")

# --- pkg-config: <libdir>/pkgconfig/forkjoin.pc -------------------------------------------------
# The prefix is written relative to ${pcfiledir}, not as CMAKE_INSTALL_PREFIX, because
# `cmake --install --prefix <p>` chooses the prefix after configure time.
set(fj_install_pkgconfigdir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${fj_install_pkgconfigdir}")
    # An absolute libdir is not under the prefix, so the file cannot find the prefix from its
    # own location: take the configured one.
    set(fj_pc_prefix "${CMAKE_INSTALL_PREFIX}")
else()
    # lib/pkgconfig -> ${pcfiledir}/../.., lib/x86_64-linux-gnu/pkgconfig -> ${pcfiledir}/../../..
    file(RELATIVE_PATH fj_pc_up "/prefix/${fj_install_pkgconfigdir}" "/prefix")
    string(REGEX REPLACE "/$" "" fj_pc_up "${fj_pc_up}") # CMake answers "../../"
    set(fj_pc_prefix "\${pcfiledir}/${fj_pc_up}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
    string(TOLOWER "${dir}" name)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
        set(fj_pc_${name} "${CMAKE_INSTALL_${dir}}")
    else()
        set(fj_pc_${name} "\${prefix}/${CMAKE_INSTALL_${dir}}")
    endif()
endforeach()

# Debian's Boost ships no .pc files, so the Boost libraries are named here instead of in Requires
# (no -L for them: Debian installs them in the linker's default path).
# The public headers include no Boost header, so a program linking the shared libforkjoin needs
# them only when linking statically (pkg-config --static). libforkjoin.a does not record its
# dependencies, so with a static library they are in Libs, needed with or without --static.
set(fj_pc_boost_libs " -lboost_thread -lboost_context")
get_target_property(fj_runtime_type forkjoin_runtime TYPE)
if(fj_runtime_type STREQUAL "SHARED_LIBRARY")
    set(fj_pc_libs_boost "")
    set(fj_pc_libs_private_boost "${fj_pc_boost_libs}")
else()
    set(fj_pc_libs_boost "${fj_pc_boost_libs}")
    set(fj_pc_libs_private_boost "")
endif()

configure_file("${PROJECT_SOURCE_DIR}/cmake/forkjoin.pc.in" "${PROJECT_BINARY_DIR}/forkjoin.pc"
    @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/forkjoin.pc" DESTINATION "${fj_install_pkgconfigdir}")
