// Catch2's main, alone in its file: it takes ~25 s to compile (STACK.md §10).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
