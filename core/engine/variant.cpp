#include "engine/variant.h"

#include "chess/attacks.h"

KIBITZ_NAMESPACE(impl) {

void init_tables() { chess::init_attacks(); }

}  // KIBITZ_NAMESPACE(impl)
