# The CLI tests run the kiln binary: build it first and tell the tests where it is.
if(TARGET kiln)
  add_dependencies(kiln_e2e_tests kiln)
  target_compile_definitions(kiln_e2e_tests PRIVATE KILN_CLI_PATH="$<TARGET_FILE:kiln>")
endif()
target_link_libraries(kiln_e2e_tests PRIVATE kiln_runtime kiln_frontend nlohmann_json::nlohmann_json)
