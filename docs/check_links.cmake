# Checks that every link and design citation in the sources resolves:
#   * every `design/<file>.md#<anchor>` (or `docs/design/...`) cited anywhere in the code, the
#     docs and the build files names a file of docs/design/ and, if it has an anchor, a heading of
#     that file; a citation of the former single docs/design.md fails;
#   * every relative Markdown link `[text](target)` in README.md and docs/**/*.md names a file that
#     exists and, if the target is a Markdown file with an anchor (or a bare `#anchor`), a heading
#     of that file.
# An anchor is a heading's GitHub slug (lower case, punctuation dropped, spaces to hyphens, `-1`,
# `-2` for repeats), an explicit `{#id}` at the end of a heading, or an `<a id="...">`.
#
# Run by CTest as docs.links (label docs); alone:
#   cmake -DFJ_SOURCE_DIR=. -P docs/check_links.cmake
# Plain CMake, no network, no other tool: it runs wherever the project configures.

cmake_minimum_required(VERSION 3.25)

if(NOT FJ_SOURCE_DIR)
    get_filename_component(FJ_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()

# GitHub's heading slug, for ASCII headings.
function(fj_slug text out)
    string(TOLOWER "${text}" s)
    string(REGEX REPLACE "[^a-z0-9 _-]" "" s "${s}")
    string(REPLACE " " "-" s "${s}")
    set(${out} "${s}" PARENT_SCOPE)
endfunction()

# The lines of Markdown `text` outside code fences, as a CMake list in `out`. What CMake lists
# treat specially is neutralised first (";" becomes ",", a backslash "/"); brackets are the
# caller's to replace, since a list element must not hold an unbalanced one.
function(fj_prose_lines text out)
    string(REPLACE ";" "," text "${text}")
    string(REPLACE "\\" "/" text "${text}")
    string(REPLACE "\n" ";" lines "${text}")
    set(prose "")
    set(in_fence OFF)
    foreach(line IN LISTS lines)
        if(line MATCHES "^[ ]*```")
            if(in_fence)
                set(in_fence OFF)
            else()
                set(in_fence ON)
            endif()
        elseif(NOT in_fence)
            list(APPEND prose "${line}")
        endif()
    endforeach()
    set(${out} "${prose}" PARENT_SCOPE)
endfunction()

# Sets fj_anchors_<id> (a list) for the Markdown file `path` once; `id` is returned in `out_id`.
function(fj_anchors_of path out_id)
    string(MAKE_C_IDENTIFIER "${path}" id)
    set(${out_id} "${id}" PARENT_SCOPE)
    get_property(done GLOBAL PROPERTY fj_anchors_done_${id} SET)
    if(done)
        return()
    endif()
    set(anchors "")
    if(EXISTS "${path}")
        file(READ "${path}" text)
        string(REPLACE "[" "(" text "${text}")
        string(REPLACE "]" ")" text "${text}")
        fj_prose_lines("${text}" lines)
        foreach(line IN LISTS lines)
            if(line MATCHES "<a (id|name)=\"([^\"]+)\"")
                list(APPEND anchors "${CMAKE_MATCH_2}")
            endif()
            if(line MATCHES "^#+[ \t]+(.*)$")
                set(heading "${CMAKE_MATCH_1}")
                if(heading MATCHES "^(.*)[ \t]*{#([A-Za-z0-9_-]+)}[ \t]*$")
                    list(APPEND anchors "${CMAKE_MATCH_2}")
                    set(heading "${CMAKE_MATCH_1}")
                endif()
                fj_slug("${heading}" slug)
                string(MAKE_C_IDENTIFIER "${slug}" key)
                if(DEFINED seen_${key})
                    math(EXPR seen_${key} "${seen_${key}} + 1")
                    list(APPEND anchors "${slug}-${seen_${key}}")
                else()
                    set(seen_${key} 0)
                    list(APPEND anchors "${slug}")
                endif()
            endif()
        endforeach()
    endif()
    set_property(GLOBAL PROPERTY fj_anchors_done_${id} TRUE)
    set_property(GLOBAL PROPERTY fj_anchors_${id} "${anchors}")
endfunction()

set(fj_errors "")

# Checks `target_file` (absolute) and `anchor` (may be empty), cited from `where`.
function(fj_check_target where cited target_file anchor)
    if(NOT EXISTS "${target_file}")
        set_property(GLOBAL APPEND PROPERTY fj_link_errors
                     "${where}: `${cited}`: no such file")
        return()
    endif()
    if(anchor STREQUAL "" OR NOT target_file MATCHES "\\.md$")
        return()
    endif()
    fj_anchors_of("${target_file}" id)
    get_property(anchors GLOBAL PROPERTY fj_anchors_${id})
    if(NOT anchor IN_LIST anchors)
        set_property(GLOBAL APPEND PROPERTY fj_link_errors
                     "${where}: `${cited}`: no heading with anchor #${anchor} in that file")
    endif()
endfunction()

# 1. Design citations everywhere.
set(fj_globs "")
foreach(dir docs algorithms runtime test perf examples cmake scripts .ci)
    foreach(ext md hpp cpp h txt cmake sh in json)
        list(APPEND fj_globs "${FJ_SOURCE_DIR}/${dir}/*.${ext}")
    endforeach()
endforeach()
file(GLOB_RECURSE fj_sources LIST_DIRECTORIES false ${fj_globs})
list(APPEND fj_sources "${FJ_SOURCE_DIR}/README.md" "${FJ_SOURCE_DIR}/CMakeLists.txt"
     "${FJ_SOURCE_DIR}/CMakePresets.json")
set(fj_design_citations 0)
foreach(source IN LISTS fj_sources)
    if(NOT EXISTS "${source}" OR source MATCHES "/check_links\\.cmake$") # its own examples
        continue()
    endif()
    file(READ "${source}" text)
    if(NOT text MATCHES "design[/.]")
        continue()
    endif()
    file(RELATIVE_PATH where "${FJ_SOURCE_DIR}" "${source}")
    string(REGEX MATCHALL "[A-Za-z0-9_./-]*design(/[A-Za-z0-9_-]+)?\\.md(#[A-Za-z0-9_-]+)?"
           cites "${text}")
    foreach(cited IN LISTS cites)
        # Only `design...` itself or a path ending in `/design...`: not `mydesign.md`.
        if(NOT cited MATCHES "(^|/)design(/[A-Za-z0-9_-]+)?\\.md")
            continue()
        endif()
        math(EXPR fj_design_citations "${fj_design_citations} + 1")
        string(REGEX MATCH "design(/[A-Za-z0-9_-]+)?\\.md(#[A-Za-z0-9_-]+)?" tail "${cited}")
        string(REGEX REPLACE "#.*" "" file_part "${tail}")
        set(anchor "")
        if(tail MATCHES "#([A-Za-z0-9_-]+)$")
            set(anchor "${CMAKE_MATCH_1}")
        endif()
        if(file_part STREQUAL "design.md")
            set_property(GLOBAL APPEND PROPERTY fj_link_errors
                         "${where}: `${cited}`: docs/design.md is now docs/design/ (index.md and one file per protocol)")
            continue()
        endif()
        fj_check_target("${where}" "${cited}" "${FJ_SOURCE_DIR}/docs/${file_part}" "${anchor}")
    endforeach()
endforeach()

# 2. Relative Markdown links in README.md and docs/.
string(ASCII 1 fj_mark)
file(GLOB_RECURSE fj_docs LIST_DIRECTORIES false "${FJ_SOURCE_DIR}/docs/*.md")
list(APPEND fj_docs "${FJ_SOURCE_DIR}/README.md")
set(fj_links 0)
foreach(doc IN LISTS fj_docs)
    file(RELATIVE_PATH where "${FJ_SOURCE_DIR}" "${doc}")
    get_filename_component(doc_dir "${doc}" DIRECTORY)
    file(READ "${doc}" text)
    string(REPLACE "](" "${fj_mark}" text "${text}")
    string(REPLACE "[" "" text "${text}")
    string(REPLACE "]" "" text "${text}")
    fj_prose_lines("${text}" lines)
    set(targets "")
    foreach(line IN LISTS lines)
        string(REGEX REPLACE "`[^`]*`" "" line "${line}") # code spans hold code, not links
        string(REGEX MATCHALL "${fj_mark}[^) \t${fj_mark}]+" found "${line}")
        list(APPEND targets ${found})
    endforeach()
    foreach(target IN LISTS targets)
        string(SUBSTRING "${target}" 1 -1 target)
        if(target MATCHES "^[a-z]+:" OR target STREQUAL "")
            continue() # https:, mailto:
        endif()
        math(EXPR fj_links "${fj_links} + 1")
        string(REGEX REPLACE "#.*" "" file_part "${target}")
        set(anchor "")
        if(target MATCHES "#(.+)$")
            set(anchor "${CMAKE_MATCH_1}")
        endif()
        if(file_part STREQUAL "")
            set(file_abs "${doc}")
        else()
            get_filename_component(file_abs "${file_part}" ABSOLUTE BASE_DIR "${doc_dir}")
        endif()
        fj_check_target("${where}" "${target}" "${file_abs}" "${anchor}")
    endforeach()
endforeach()

get_property(errors GLOBAL PROPERTY fj_link_errors)
list(LENGTH errors n)
if(n GREATER 0)
    list(JOIN errors "\n  " listed)
    message(FATAL_ERROR "${n} unresolved links or design citations:\n  ${listed}")
endif()
message(STATUS "docs links: ${fj_design_citations} design citations and ${fj_links} Markdown "
               "links resolve")
