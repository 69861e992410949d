# Fixtures of the support suite (made by scripts/make_support_test_data.py).
target_compile_definitions(kiln_support_tests PRIVATE KILN_SUPPORT_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/support/data")
# The tests build hand-made archives with designated initializers that leave optional fields out.
target_compile_options(kiln_support_tests PRIVATE -Wno-missing-field-initializers)
