# fabench as its users install it (docs/design/packaging.md):
#   component fabench      the binaries, fabench-report and the tools (bench/, tools/)
#   component fabench-dev  every library layer (fabench_add_layer installs each, with its headers),
#                          exported as fabench::<layer>, and find_package(fabench)'s files
# Included last from the top-level CMakeLists.txt, after every layer is declared.
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

# The interface targets every layer links PRIVATE: a static library's private links are part of
# its exported link interface ($<LINK_ONLY:...>), so they are exported too.
set_target_properties(fabench_warnings PROPERTIES EXPORT_NAME warnings)
set_target_properties(fabench_sanitizers PROPERTIES EXPORT_NAME sanitizers)
install(TARGETS fabench_warnings fabench_sanitizers EXPORT fabenchTargets COMPONENT fabench-dev)

set(FABENCH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fabench)
install(EXPORT fabenchTargets NAMESPACE fabench:: DESTINATION ${FABENCH_CMAKE_DIR} COMPONENT fabench-dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/fabenchConfig.cmake.in
  ${CMAKE_BINARY_DIR}/fabenchConfig.cmake INSTALL_DESTINATION ${FABENCH_CMAKE_DIR})
# 0.x: a minor version may change the API, so a consumer asking for 0.1 gets 0.1.*.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/fabenchConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/fabenchConfig.cmake ${CMAKE_BINARY_DIR}/fabenchConfigVersion.cmake
  DESTINATION ${FABENCH_CMAKE_DIR} COMPONENT fabench-dev)

# cpack strips the binaries (CPACK_STRIP_FILES) but not static libraries: their debug info
# (RelWithDebInfo) would make fabench-dev ten times larger.
install(CODE "
  if(CMAKE_INSTALL_DO_STRIP)
    file(GLOB libs \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libfabench_*.a\")
    foreach(lib IN LISTS libs)
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \${lib} COMMAND_ERROR_IS_FATAL ANY)
    endforeach()
  endif()" COMPONENT fabench-dev)
