#include "cli.h"

int main(int argc, char** argv) { return kibitz::cli::run(argc, argv); }
