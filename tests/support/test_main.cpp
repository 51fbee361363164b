// Test entry point: checks that this machine can run the variant the tests
// were compiled for, and fills its tables.
#include <gtest/gtest.h>

#include <cstdio>

#include "common/cpu.h"
#include "engine/variant.h"

int main(int argc, char** argv) {
  const kibitz::Isa isa = KIBITZ_HAS_PEXT ? kibitz::Isa::bmi2 : kibitz::Isa::generic;
  if (!kibitz::isa_supported(isa)) {
    std::fprintf(stderr, "this CPU cannot run the %s variant\n", kibitz::isa_name(isa).data());
    return 1;
  }
  kibitz::impl::init_tables();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
