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
