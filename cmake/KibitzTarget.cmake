# Per-target settings: language level, warnings and sanitizers are applied to
# each Kibitz target through kibitz_target(), never through global flags.

set(KIBITZ_SANITIZE "" CACHE STRING
    "Sanitizer build: '' (none), 'address' (ASan+UBSan), 'thread' (TSan) or 'fuzzer' (libFuzzer+ASan+UBSan, clang)")
set_property(CACHE KIBITZ_SANITIZE PROPERTY STRINGS "" address thread fuzzer)

function(kibitz_sanitizer_flags out)
  if(KIBITZ_SANITIZE STREQUAL "address")
    set(${out} -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer PARENT_SCOPE)
  elseif(KIBITZ_SANITIZE STREQUAL "fuzzer")
    # Coverage instrumentation everywhere; the fuzz targets add -fsanitize=fuzzer.
    set(${out} -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
               -fno-omit-frame-pointer PARENT_SCOPE)
  elseif(KIBITZ_SANITIZE STREQUAL "thread")
    set(${out} -fsanitize=thread -fno-omit-frame-pointer PARENT_SCOPE)
  elseif(KIBITZ_SANITIZE STREQUAL "")
    set(${out} "" PARENT_SCOPE)
  else()
    message(FATAL_ERROR "KIBITZ_SANITIZE must be '', 'address', 'thread' or 'fuzzer', not '${KIBITZ_SANITIZE}'")
  endif()
endfunction()

function(kibitz_target target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    target_compile_options(${target} PRIVATE
      $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                                     -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>
      # GCC 12 reports std::string concatenation as overlapping memcpy (GCC bug 105329).
      $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
    kibitz_sanitizer_flags(san)
    if(san)
      target_compile_options(${target} PRIVATE ${san})
      target_link_options(${target} PRIVATE ${san})
    endif()
  endif()
endfunction()

# kibitz_server_side_target(target): a target of the server (I/O, API, store,
# access), the command line, or a test executable of them. Sanitizer builds
# compile these at -O0, and the engine (core/, its searches and rules) at the
# build's own -O1: the tests spend their time in searches, in core's code,
# while the Beast, Asio and JSON templates of these targets were half of the
# ASan build's compile time at -O1 (server/http's two largest units took 94 s
# and 90 s; one of them 97 s at -O1 against 50 s at -O0). The sanitizers
# check -O0 code as fully as -O1. None of these targets includes the
# search's templates (search/*.h), so no search runs unoptimised. The fuzz
# targets built beside them run fewer inputs a second through the server's
# parsers, the price of the shorter build.
function(kibitz_server_side_target target)
  kibitz_target(${target})
  if(KIBITZ_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  endif()
endfunction()
