# Fails when <forkjoin/forkjoin.hpp> preprocesses to more lines than FJ_LINE_LIMIT: every user
# translation unit that includes the umbrella pays for each of those lines. Run by CTest as
# build.umbrella_weight (test/headers/CMakeLists.txt); alone:
#   cmake -DFJ_CXX=g++ -DFJ_SOURCE_DIR=. -DFJ_WORK_DIR=/tmp -DFJ_LINE_LIMIT=96500 \
#         -P test/headers/umbrella_weight.cmake
# The count is `g++ -std=c++20 -O2 -E` on a file holding just the #include, newlines counted as
# `wc -l` counts them (docs/performance.md, "Compile cost").
foreach(var IN ITEMS FJ_CXX FJ_SOURCE_DIR FJ_WORK_DIR FJ_LINE_LIMIT)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "umbrella_weight.cmake: -D${var}=... is required")
    endif()
endforeach()

set(source "${FJ_WORK_DIR}/umbrella_weight.cpp")
set(output "${FJ_WORK_DIR}/umbrella_weight.ii")
file(WRITE "${source}" "#include <forkjoin/forkjoin.hpp>\n")
execute_process(
    COMMAND "${FJ_CXX}" -std=c++20 -O2 -E -x c++ "${source}" -o "${output}"
            -I "${FJ_SOURCE_DIR}/runtime/include" -I "${FJ_SOURCE_DIR}/algorithms/include"
    RESULT_VARIABLE result)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "umbrella_weight: preprocessing <forkjoin/forkjoin.hpp> failed (${result})")
endif()

# The newline count, as the length lost when the newlines are removed.
file(READ "${output}" text)
string(LENGTH "${text}" with_newlines)
string(REPLACE "\n" "" text "${text}")
string(LENGTH "${text}" without_newlines)
math(EXPR lines "${with_newlines} - ${without_newlines}")
file(REMOVE "${source}" "${output}")

if(lines GREATER FJ_LINE_LIMIT)
    message(FATAL_ERROR
        "<forkjoin/forkjoin.hpp> preprocesses to ${lines} lines, over the limit of "
        "${FJ_LINE_LIMIT}: a public header includes more than its declarations need. Keep heavy "
        "headers out of the public ones (move the code that needs them into runtime/src), or, if "
        "a public signature now needs one, raise the limit in test/headers/CMakeLists.txt and "
        "the figures in docs/performance.md.")
endif()
message(STATUS "umbrella_weight: ${lines} preprocessed lines (limit ${FJ_LINE_LIMIT})")
