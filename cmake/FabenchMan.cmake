# Man pages for every binary and fabench-report, made at build time from their --help-all by
# help2man, gzipped as Debian installs them, installed to share/man/man1 (component fabench).
# ctest package:man renders each (test/package/man.sh). Without help2man (tools/install-deps
# installs it) or with FABENCH_MAN=OFF there are none; a cross build has none (the binaries
# cannot run on the build host), nor do the asan and coverage presets.
include_guard(GLOBAL)
include(GNUInstallDirs)

option(FABENCH_MAN "Build man pages from each binary's --help-all (help2man)" ON)
find_program(FABENCH_HELP2MAN help2man)
find_program(FABENCH_GZIP gzip)
if(FABENCH_MAN AND (NOT FABENCH_HELP2MAN OR NOT FABENCH_GZIP OR CMAKE_CROSSCOMPILING))
  message(STATUS "fabench: no man pages (help2man or gzip not found, or a cross build)")
  set(FABENCH_MAN OFF)
endif()
# The sanitized and coverage trees are for tests: running their binaries at build time would
# count --help as covered, and a sanitizer report would fail the build.
if(FABENCH_MAN AND (FABENCH_SANITIZE OR CMAKE_CXX_FLAGS MATCHES "--coverage"))
  message(STATUS "fabench: no man pages in a sanitized or coverage build")
  set(FABENCH_MAN OFF)
endif()
set(FABENCH_MAN_DIR ${CMAKE_BINARY_DIR}/man)

# The NAME line of each page (help2man --name); a binary not listed gets the suite's.
set(FABENCH_MAN_NAME_fabench-lat "point-to-point RDMA latency: write, send, read and atomics")
set(FABENCH_MAN_NAME_fabench-bw "point-to-point RDMA bandwidth and message rate")
set(FABENCH_MAN_NAME_fabench-coll "all-reduce, all-gather, reduce-scatter and all-to-all across N ranks over RDMA")
set(FABENCH_MAN_NAME_fabench-kv "LLM KV-cache transfers from prefill to decode nodes over RDMA")
set(FABENCH_MAN_NAME_fabench-ep "MoE dispatch and combine across N ranks over RDMA")
set(FABENCH_MAN_NAME_fabench-accept "fabric acceptance: every pair of N nodes against the link rate")
set(FABENCH_MAN_NAME_fabench-congest "congestion impact: victims' latency and bandwidth under congestor traffic across N ranks")
set(FABENCH_MAN_NAME_fabench-info "this host's interconnect record: RDMA devices, PCIe links, GPUs, software")
set(FABENCH_MAN_NAME_fabench-report "one HTML report from fabench JSON runs")
set(FABENCH_MAN_NAME_fabench-launch "start N local ranks of a command with RANK, WORLD_SIZE and MASTER_ADDR set")
set(FABENCH_MAN_NAME_softroce-vm "run a command in a qemu guest with Soft-RoCE devices (fabench's test bed)")

# fabench_man_page(NAME PROGRAM [HELP_OPTION opt] [NO_VERSION_OPTION] [DEPENDS target...]):
# NAME.1 from `PROGRAM --help-all` (or HELP_OPTION: fabench-report and the tools have --help
# only) and `PROGRAM --version` (NO_VERSION_OPTION: the project's version, for the tools that
# have none), with the sections of cmake/man/NAME.h2m where there is one (argparse's "usage:"
# is not help2man's "Usage:").
function(fabench_man_page name program)
  if(NOT FABENCH_MAN)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 2 arg "NO_VERSION_OPTION" "HELP_OPTION" "DEPENDS")
  set(version --version-option=--version)
  if(arg_NO_VERSION_OPTION)
    set(version --version-string=${PROJECT_VERSION})
  endif()
  if(NOT arg_HELP_OPTION)
    set(arg_HELP_OPTION --help-all)
  endif()
  set(about "${FABENCH_MAN_NAME_${name}}")
  if(NOT about)
    set(about "an RDMA fabric benchmark of the fabench suite")
  endif()
  set(page ${FABENCH_MAN_DIR}/${name}.1)
  set(include "")
  if(EXISTS ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/man/${name}.h2m)
    set(include --include=${CMAKE_CURRENT_FUNCTION_LIST_DIR}/man/${name}.h2m)
    list(APPEND arg_DEPENDS ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/man/${name}.h2m)
  endif()
  add_custom_command(OUTPUT ${page} ${page}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${FABENCH_MAN_DIR}
    COMMAND ${FABENCH_HELP2MAN} --no-info --help-option=${arg_HELP_OPTION}
            ${version} --name=${about} ${include} --output=${page} ${program}
    COMMAND ${FABENCH_GZIP} -9nf -k ${page}
    DEPENDS ${arg_DEPENDS} VERBATIM
    COMMENT "Man page ${name}.1")
  add_custom_target(fabench_man_${name} ALL DEPENDS ${page}.gz)
  install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT fabench)
endfunction()
