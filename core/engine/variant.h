// Set-up of one instruction-set variant's tables. The bmi2 variant must not
// run before the CPU check, so its tables are filled here, on demand.
#pragma once

#include "common/isa.h"

KIBITZ_NAMESPACE(impl) {

// Fills every table of this variant (idempotent, thread-safe).
void init_tables();

}  // KIBITZ_NAMESPACE(impl)
