// main.cpp — the Catch2 test runner for the harness (Catch2 v2).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
