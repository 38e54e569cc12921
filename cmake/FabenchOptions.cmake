# Warnings and sanitizers as interface targets: linked by every fabench target,
# never set directory-wide.
add_library(fabench_warnings INTERFACE)
add_library(fabench::warnings ALIAS fabench_warnings)
target_compile_options(fabench_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
  -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough
  $<$<BOOL:${FABENCH_WERROR}>:-Werror>)

set(FABENCH_SANITIZE "" CACHE STRING "Sanitizers to enable, e.g. address,undefined")
add_library(fabench_sanitizers INTERFACE)
add_library(fabench::sanitizers ALIAS fabench_sanitizers)
if(FABENCH_SANITIZE)
  target_compile_options(fabench_sanitizers INTERFACE
    -fsanitize=${FABENCH_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(fabench_sanitizers INTERFACE -fsanitize=${FABENCH_SANITIZE})
endif()

# The asan preset builds at -O0: its tree is a large share of CI's CPU time,
# and -O0 cuts its compile time by a third (docs/design/reliability.md). The code
# the unit tests spend their time in (the collective schedules and
# reductions, the acceptance schedules, the token bucket, the tests that
# drive them and Catch2's runtime) gets FABENCH_HOT_OPT (-O1 there), so the
# sanitized unit tests stay nearly as fast. Empty: no exception.
set(FABENCH_HOT_OPT "" CACHE STRING "Compile options for the unit tests' compute-heavy code, after the build type's")
# fabench_hot_sources(FILE...): FABENCH_HOT_OPT on these sources of the
# calling directory's targets.
function(fabench_hot_sources)
  if(FABENCH_HOT_OPT)
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "${FABENCH_HOT_OPT}")
  endif()
endfunction()
