# Install rules: `cmake --install <build> --prefix <p>` gives <p>/include/forkjoin/...,
# the runtime library, and <p>/lib/cmake/forkjoin/ so that consumers can write
#     find_package(forkjoin CONFIG REQUIRED)
#     target_link_libraries(app PRIVATE forkjoin::forkjoin)
# test/install/ is a consumer project that proves this (CTest label "install").
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
