// Instruction-set variants of the engine.
//
// Everything hot in core/ (attacks, move generation, search) is compiled twice:
// once for plain x86-64 and once with POPCNT/BMI1/BMI2, each copy in its own
// inline namespace (isa_generic, isa_bmi2). Code that includes core headers
// sees `kibitz::chess::Position` and gets the copy of its own translation unit;
// the neutral layer (core/engine) picks a copy at run time from cpuid. Names
// never collide, so the linker cannot swap one copy for the other.
#pragma once

#if defined(KIBITZ_ISA_BMI2)
#define KIBITZ_ISA_NAME isa_bmi2
#define KIBITZ_HAS_PEXT 1
#else
#define KIBITZ_ISA_NAME isa_generic
#define KIBITZ_HAS_PEXT 0
#endif

// Opens namespace kibitz::<isa>::sub, with <isa> inline. Neutral code must not
// use the same sub-namespace names (kibitz::engine, ::server, ::proto are
// neutral; chess, draughts, search, tt, bits, impl are per variant). Use as
//   KIBITZ_NAMESPACE(chess) { ... }
#define KIBITZ_NAMESPACE(sub) namespace kibitz::inline KIBITZ_ISA_NAME::sub
