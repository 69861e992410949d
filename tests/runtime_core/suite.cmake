# The torch-free runtime's suite links only libkiln_runtime_core.so (kiln_add_test_suite's DEPS): it compiles its
# modules with the kiln binary (another process) and loads the PyTorch plug-in from build/lib, next to the core.
add_dependencies(kiln_runtime_core_tests kiln kiln_runtime_torch_shared)
target_compile_definitions(kiln_runtime_core_tests PRIVATE KILN_CLI_PATH="$<TARGET_FILE:kiln>")
