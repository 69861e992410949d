# The torch-free runtime's suite links only libkiln_runtime_core.so (kiln_add_test_suite's DEPS): it compiles its
# modules with the kiln binary (another process) and loads the PyTorch plug-in from build/lib, next to the core.
add_dependencies(kiln_runtime_core_tests kiln kiln_runtime_torch_shared)
target_compile_definitions(kiln_runtime_core_tests PRIVATE KILN_CLI_PATH="$<TARGET_FILE:kiln>")
# A plug-in of another build (HostModule.PluginOfAnotherBuildIsRefused).
add_library(kiln_test_foreign_torch_plugin MODULE ${PROJECT_SOURCE_DIR}/tests/runtime_core/foreign_torch_plugin.cpp)
target_include_directories(kiln_test_foreign_torch_plugin PRIVATE ${PROJECT_SOURCE_DIR}/include)
add_dependencies(kiln_runtime_core_tests kiln_test_foreign_torch_plugin)
target_compile_definitions(kiln_runtime_core_tests PRIVATE
                           KILN_FOREIGN_TORCH_PLUGIN="$<TARGET_FILE:kiln_test_foreign_torch_plugin>")
