# The CLI tests run the kiln binary: build it first and tell the tests where it is.
if(TARGET kiln)
  add_dependencies(kiln_e2e_tests kiln)
  target_compile_definitions(kiln_e2e_tests PRIVATE KILN_CLI_PATH="$<TARGET_FILE:kiln>")
endif()
target_link_libraries(kiln_e2e_tests PRIVATE kiln_runtime kiln_frontend nlohmann_json::nlohmann_json)
# The fixtures on the CUDA backend (cuda_fixtures_test.cpp) need a GPU: one ctest kiln_e2e_gpu_tests labeled gpu
# (see kiln_add_test_suite), left out of the per-test list that CI runs.
set(KILN_SUITE_GPU_TESTS "*CudaFixture.*")
