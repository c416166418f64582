/* not_libcrypto.c — a shared library that is given libcrypto's soname (CMakeLists.txt) and has
 * none of its functions: test_libcrypto loads it first, so that StepKit's dlopen of the soname
 * gets it, and libcrypto is, for that process, unavailable. */
int stepkit_not_libcrypto = 1;
