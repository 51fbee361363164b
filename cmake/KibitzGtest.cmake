# kibitz_gtests(<target> PREFIX <p> [NAME <n>] [FILTER <gtest filter>]
#               [TEST_LIST <var>] [PRETTY_VALUES] [LABELS <l>...] [TIMEOUT <s>])
#
# A GoogleTest executable's tests for ctest.
# - Release builds: one ctest test per case (gtest_discover_tests), named
#   <p><Suite>.<Case>, each in its own process: a failure names its case, and
#   ctest spreads the cases over the cores.
# - Sanitizer builds (KIBITZ_SANITIZE): one ctest test per executable, named
#   <p><n> (<n> defaults to the target's name), its cases in one process. A
#   process under ASan or TSan costs a few tenths of a second to start and
#   end (shadow memory, LeakSanitizer's scan at exit): per case that was
#   about a hundred seconds of the asan stage's wall time on two cores. Its
#   output names the failing cases; `<target> --gtest_filter=...` runs one.
#   Started first (COST): the longest tests of the stage.
# FILTER is a --gtest_filter pattern (the cases to run); LABELS go to every
# test made; TIMEOUT is a case's, in release (an executable's is 1200 s).
include(GoogleTest)

function(kibitz_gtests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "PRETTY_VALUES" "PREFIX;NAME;FILTER;TEST_LIST;TIMEOUT" "LABELS")
  if(NOT arg_NAME)
    set(arg_NAME ${target})
  endif()
  set(properties)
  if(arg_LABELS)
    list(APPEND properties LABELS "${arg_LABELS}")
  endif()
  if(KIBITZ_SANITIZE)
    set(name "${arg_PREFIX}${arg_NAME}")
    set(filter)
    if(arg_FILTER)
      set(filter "--gtest_filter=${arg_FILTER}")
    endif()
    add_test(NAME ${name} COMMAND ${target} ${filter})
    set_tests_properties(${name} PROPERTIES TIMEOUT 1200 COST 100 ${properties})
    return()
  endif()
  set(options TEST_PREFIX "${arg_PREFIX}" DISCOVERY_TIMEOUT 30)
  if(NOT arg_PRETTY_VALUES)
    list(APPEND options NO_PRETTY_VALUES)
  endif()
  if(arg_FILTER)
    list(APPEND options TEST_FILTER "${arg_FILTER}")
  endif()
  if(arg_TEST_LIST)
    list(APPEND options TEST_LIST ${arg_TEST_LIST})
  endif()
  if(arg_TIMEOUT)
    list(APPEND properties TIMEOUT ${arg_TIMEOUT})
  endif()
  if(properties)
    list(APPEND options PROPERTIES ${properties})
  endif()
  gtest_discover_tests(${target} ${options})
endfunction()
