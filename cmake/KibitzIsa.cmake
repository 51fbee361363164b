# Instruction-set variants (see core/common/isa.h). The generic variant is
# always built; the bmi2 variant (POPCNT, BMI1, BMI2: PEXT attack lookups;
# AVX2 in the chess network's functions only, core/chess/nn.cpp: compiled
# into the whole variant, inline library templates would carry VEX code that
# the linker may also hand the generic variant) is built on x86-64 and
# chosen at run time when the CPU has those instructions (every x86-64 CPU
# with BMI2 but a few low-end ones also has AVX2).
# Nothing is ever compiled with -march=native.

include(CheckCXXSourceRuns)

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set(_kibitz_default_bmi2 ON)
else()
  set(_kibitz_default_bmi2 OFF)
endif()
option(KIBITZ_BMI2_VARIANT "Also build the POPCNT/BMI2 variant, selected at run time" ${_kibitz_default_bmi2})
set(KIBITZ_BMI2_FLAGS -mpopcnt -mbmi -mbmi2)

# Tests of the bmi2 variant can only run where the build machine has BMI2 and AVX2.
if(KIBITZ_BMI2_VARIANT)
  check_cxx_source_runs([[
    int main() { __builtin_cpu_init(); return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("avx2") ? 0 : 1; }
  ]] KIBITZ_BUILD_HOST_HAS_BMI2)
endif()

# kibitz_variant_target(<target> <generic|bmi2>): compile <target> as part of
# the given variant.
function(kibitz_variant_target target variant)
  if(variant STREQUAL "bmi2")
    target_compile_definitions(${target} PUBLIC KIBITZ_ISA_BMI2)
    target_compile_options(${target} PRIVATE ${KIBITZ_BMI2_FLAGS})
  endif()
endfunction()
