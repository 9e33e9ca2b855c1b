// Owns the test suites' precompiled header (test/CMakeLists.txt).
