# The converter harness is shared by every conversion test file.
target_sources(kiln_conversion_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/conversion/converter_harness.cpp)
