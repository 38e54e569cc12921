# `cpack -G DEB` in a build dir (tools/package-check does it, then lintian, then an install in a
# fresh Debian 12 root): fabench_<version>_<arch>.deb (component fabench: the binaries, man pages,
# fabench-report and the tools) and fabench-dev_<version>_<arch>.deb (component fabench-dev: the
# static library layers, headers and find_package(fabench)); docs/design/packaging.md.
include_guard(GLOBAL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fabench)
set(CPACK_PACKAGE_VENDOR "fabench")
set(CPACK_PACKAGE_CONTACT "fabench maintainers <maintainers@users.noreply.a-seed-7c4ac7d5.example>")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it before each package's own synopsis
# (the first line of its description below).
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # RelWithDebInfo's debug info stays in the build tree
set(CPACK_COMPONENTS_ALL fabench fabench-dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <name>_<version>-<release>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The architecture the binaries are for, not the host's (CPack asks dpkg, which names the host's):
# the aarch64 cross build (cmake/toolchain-aarch64.cmake) makes _arm64.deb files. dpkg-shlibdeps
# then reads the :arm64 libraries' symbols files (tools/install-deps --arm64 installs them).
if(CMAKE_CROSSCOMPILING)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  else()
    message(FATAL_ERROR "fabench: no Debian architecture known for a cross build to ${CMAKE_SYSTEM_PROCESSOR}")
  endif()
endif()
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/fabench/fabench")

set(CPACK_DEBIAN_FABENCH_PACKAGE_NAME fabench)
set(CPACK_COMPONENT_FABENCH_DESCRIPTION "RDMA fabric microbenchmark suite
Point-to-point latency and bandwidth (perftest's flags), collectives across
N ranks, LLM KV-cache and MoE dispatch transfers, fabric acceptance of every
pair of nodes, fabench-info (the host's interconnect record) and
fabench-report (HTML from JSON runs), over rdma-core's libibverbs on
InfiniBand and RoCE.")
# The runtime libraries (libibverbs1, librdmacm1, libbenchmark1, libfmt9, libspdlog1.10, libc,
# libstdc++) come from dpkg-shlibdeps; the rest is what the binaries load or run themselves.
set(CPACK_DEBIAN_FABENCH_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FABENCH_PACKAGE_DEPENDS "ibverbs-providers, python3, python3-matplotlib")
set(CPACK_DEBIAN_FABENCH_PACKAGE_SUGGESTS "rdma-core, qemu-system-x86, busybox-static")

set(CPACK_DEBIAN_FABENCH-DEV_PACKAGE_NAME fabench-dev)
set(CPACK_DEBIAN_FABENCH-DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_FABENCH-DEV_DESCRIPTION "RDMA fabric microbenchmark suite - development files
fabench's library layers as static libraries with their headers and a CMake
package: find_package(fabench) gives fabench::verbs (RAII over libibverbs),
fabench::ctrl, fabench::harness and the other layers.")
set(CPACK_DEBIAN_FABENCH-DEV_PACKAGE_DEPENDS
  "libibverbs-dev, librdmacm-dev, libbenchmark-dev (>= 1.7), libfmt-dev, libspdlog-dev, libcli11-dev, nlohmann-json3-dev (>= 3.10)")

# Debian's policy files for each package: the copyright (Apache-2.0, common-licenses) and a
# changelog, in /usr/share/doc/<package>.
string(TIMESTAMP FABENCH_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
foreach(component fabench fabench-dev)
  set(doc ${CMAKE_BINARY_DIR}/debian/${component})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/copyright ${doc}/copyright COPYONLY)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/changelog.in ${doc}/changelog.Debian @ONLY)
  execute_process(COMMAND gzip -9nf ${doc}/changelog.Debian)
  install(FILES ${doc}/copyright ${doc}/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${component}
          COMPONENT ${component})
endforeach()

include(CPack)
