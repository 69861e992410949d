# The torch-library tests compile their module with the kiln binary (the test links only libkiln_torch.so).
if(TARGET kiln)
  add_dependencies(kiln_torch_library_tests kiln)
  target_compile_definitions(kiln_torch_library_tests PRIVATE KILN_CLI_PATH="$<TARGET_FILE:kiln>")
endif()
