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
