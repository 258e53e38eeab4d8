// libFuzzer's driver, for the fuzz targets' own `main`.
//
// SwiftPM links every executable with `--defsym main=<Module>_main`, so libFuzzer's `main` never
// runs: each target's main.swift calls this instead (libFuzzer's documented entry point for
// programs that keep their own main). The definition comes with `-sanitize=fuzzer`.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test_one_input)(const uint8_t *data, size_t size));
