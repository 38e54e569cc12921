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

# The :arm64 libc6 installs the loader at /lib/ld-linux-aarch64.so.1 and the libraries under
# /usr/lib/aarch64-linux-gnu, where qemu-user's guest finds them; -L names the cross
# toolchain's sysroot first for the loader.
find_program(FABENCH_QEMU_AARCH64 qemu-aarch64)
if(FABENCH_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${FABENCH_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
