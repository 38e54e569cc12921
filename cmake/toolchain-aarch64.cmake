# Cross build for aarch64 (arm64) with Debian's cross toolchain and multiarch :arm64 libraries
# (tools/install-deps --arm64):
#   cmake --preset arm64 && cmake --build --preset arm64    # or tools/cross-test
# The unit tests run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR: ctest and Catch2's test
# discovery go through it); docs/design/packaging.md.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Libraries and CMake packages: the target's multiarch directories (/usr/lib/aarch64-linux-gnu)
# before the host's; headers in /usr/include serve both (the -dev packages are Multi-Arch: same,
# with architecture-specific files under /usr/include/aarch64-linux-gnu).
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# pkg-config (libibverbs, librdmacm): the target's .pc files only, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# qemu-user runs the target's binaries on the host. The :arm64 libc6 (a dependency of the :arm64
# libraries) installs the loader at /lib/ld-linux-aarch64.so.1 and every library in
# /usr/lib/aarch64-linux-gnu, so the guest needs no -L. With -L /usr/aarch64-linux-gnu (the cross
# toolchain's libc beside the multiarch libraries) test_ctrl_token.cpp's token mismatch case spun
# until its timeout; without it the case passes in under a second.
find_program(FABENCH_QEMU_AARCH64 qemu-aarch64)
if(FABENCH_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${FABENCH_QEMU_AARCH64})
endif()
