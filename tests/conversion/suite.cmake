# The converter harness is shared by every conversion test file.
target_sources(kiln_conversion_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/conversion/converter_harness.cpp)
# The converter harness cases (fp32 and the reduced-precision family) on the CUDA backend only: label gpu (CI runs
# `ctest -LE gpu`); on a machine without a GPU every case skips with a message.
if(KILN_CUDA_ENABLED)
  add_test(NAME kiln_conversion_gpu_tests COMMAND kiln_conversion_tests --gtest_filter=*Converters.*)
  set_tests_properties(kiln_conversion_gpu_tests PROPERTIES ENVIRONMENT "KILN_TEST_BACKENDS=cuda;${KILN_TEST_ENV}"
                                                            LABELS "conversion;gpu")
endif()
