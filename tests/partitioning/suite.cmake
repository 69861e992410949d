# Extra links of the partitioning tests: the frontend (coverage on the bundled fixtures) and, where it is built,
# the runtime's reference executor (numeric check that partitioned graphs compute the original function).
target_link_libraries(kiln_partitioning_tests PRIVATE kiln_frontend)
if(TARGET kiln_runtime)
  target_link_libraries(kiln_partitioning_tests PRIVATE kiln_runtime)
  target_compile_definitions(kiln_partitioning_tests PRIVATE KILN_PARTITIONING_WITH_REFERENCE=1)
endif()
