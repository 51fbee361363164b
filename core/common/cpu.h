// Which instruction-set variant of the engine this CPU can run (neutral code,
// compiled once).
#pragma once

#include <optional>
#include <string_view>

namespace kibitz {

enum class Isa { generic, bmi2 };

// True when the CPU can execute the given variant.
bool isa_supported(Isa isa);

// The fastest variant this CPU supports, unless the environment variable
// KIBITZ_ISA names another one (generic|bmi2) that it supports.
Isa default_isa();

std::string_view isa_name(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);

}  // namespace kibitz
