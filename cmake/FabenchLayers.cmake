# fabench_add_layer(): one library layer of lib/, data flowing down (docs/ARCHITECTURE.md).
#
#   fabench_add_layer(NAME <layer>
#     [PUBLIC <target>...]          # linked PUBLIC: fabench::<layer> of layers below, packages
#     [PRIVATE <target>...]         # linked PRIVATE; fabench::warnings and ::sanitizers are added
#     [INCLUDE_LAYERS <layer>...]   # layers below whose headers it sees without linking them
#     [DEFINITIONS <def>...]        # PRIVATE compile definitions
#     [HOT | HOT_SOURCES <file>...]) # fabench_hot_sources() on all its sources or on these
#
# makes fabench_<layer> (static, sources src/<layer>/*.cpp) and its alias fabench::<layer>,
# installed with its headers and exported as fabench::<layer> (cmake/FabenchPackage.cmake).
#
# Each layer sees only its own headers and those of the layers below: its include root is a
# directory of the build tree holding one link, fabench/<layer> -> lib/include/fabench/<layer>,
# and the roots of the layers below come through target_link_libraries (or INCLUDE_LAYERS).
# An #include of a layer above does not compile, so the build, not a grep, keeps the layering.
# A layer may name only layers declared before it, so the graph cannot have a cycle.
#
# Every layer and the layers it names (links or INCLUDE_LAYERS) go to
# ${CMAKE_BINARY_DIR}/layers.txt, one "layer: dep..." line each, at the end of the calling
# directory; test/layers/check_layers.py reads it (ctest layers:downward) and fails on an
# #include of a layer above or beside.
include_guard(GLOBAL)
include(GNUInstallDirs)

set_property(GLOBAL PROPERTY FABENCH_LAYER_GRAPH ${CMAKE_BINARY_DIR}/layers.txt)
set_property(GLOBAL PROPERTY FABENCH_LAYERS "")
set_property(GLOBAL PROPERTY FABENCH_LAYER_LINES "")

function(_fabench_write_layer_graph)
  get_property(lines GLOBAL PROPERTY FABENCH_LAYER_LINES)
  get_property(out GLOBAL PROPERTY FABENCH_LAYER_GRAPH)
  list(JOIN lines "\n" text)
  # Written only when it changes.
  file(CONFIGURE OUTPUT ${out}
       CONTENT "# layer: the layers it links or sees (fabench_add_layer)\n${text}\n")
endfunction()
cmake_language(DEFER CALL _fabench_write_layer_graph)

function(fabench_add_layer)
  cmake_parse_arguments(PARSE_ARGV 0 arg "HOT" "NAME"
    "PUBLIC;PRIVATE;INCLUDE_LAYERS;DEFINITIONS;HOT_SOURCES")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_NAME)
    message(FATAL_ERROR "fabench_add_layer(NAME <layer> ...): bad arguments "
                        "${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(layer ${arg_NAME})
  set(target fabench_${layer})
  get_property(declared GLOBAL PROPERTY FABENCH_LAYERS)

  # Downward only: every fabench::<x> named (but the interface targets) is a layer declared before.
  set(below "")
  foreach(dep IN LISTS arg_PUBLIC arg_PRIVATE)
    if(dep MATCHES "^fabench::(.+)$")
      set(name ${CMAKE_MATCH_1})
      if(NOT name MATCHES "^(warnings|sanitizers)$")
        list(APPEND below ${name})
      endif()
    endif()
  endforeach()
  list(APPEND below ${arg_INCLUDE_LAYERS})
  list(REMOVE_DUPLICATES below)
  foreach(dep IN LISTS below)
    if(NOT dep IN_LIST declared)
      message(FATAL_ERROR "layer ${layer} names ${dep}, which is not a layer declared before it "
                          "(layers only link or see layers below them)")
    endif()
  endforeach()

  file(GLOB src CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/${layer}/*.cpp)
  add_library(${target} STATIC ${src})
  add_library(fabench::${layer} ALIAS ${target})
  if(arg_HOT)
    fabench_hot_sources(${src})
  endif()
  if(arg_HOT_SOURCES)
    fabench_hot_sources(${arg_HOT_SOURCES})
  endif()

  set(root ${CMAKE_CURRENT_BINARY_DIR}/layers/${layer})
  file(MAKE_DIRECTORY ${root}/fabench)
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR}/include/fabench/${layer} ${root}/fabench/${layer} SYMBOLIC)
  # Installed, every layer's headers share one include root (cmake/FabenchPackage.cmake).
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${root}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  foreach(seen IN LISTS arg_INCLUDE_LAYERS)
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_BINARY_DIR}/layers/${seen}>)
  endforeach()
  if(arg_DEFINITIONS)
    target_compile_definitions(${target} PRIVATE ${arg_DEFINITIONS})
  endif()
  if(arg_PUBLIC)
    target_link_libraries(${target} PUBLIC ${arg_PUBLIC})
  endif()
  target_link_libraries(${target} PRIVATE ${arg_PRIVATE} fabench::warnings fabench::sanitizers)
  # Parsing CLI11, nlohmann/json, fmt and Google Benchmark once per few sources instead of
  # once per source: a third less CPU time for the default build (docs/design/reliability.md). Sources
  # with their own compile options (fabench_hot_sources) stay apart, as CMake does for any.
  if(FABENCH_FAST_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()

  # The CMake package: the layer as fabench::<layer>, with its headers (component fabench-dev).
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${layer})
  install(TARGETS ${target} EXPORT fabenchTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT fabench-dev)
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/fabench/${layer}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fabench COMPONENT fabench-dev)

  set_property(GLOBAL APPEND PROPERTY FABENCH_LAYERS ${layer})
  list(JOIN below " " deps)
  set_property(GLOBAL APPEND PROPERTY FABENCH_LAYER_LINES "${layer}: ${deps}")
endfunction()
