# The layer tests again on the CUDA backend: label gpu (CI runs `ctest -LE gpu`); on a machine without a GPU
# every test skips with a message.
if(KILN_CUDA_ENABLED)
  add_test(NAME kiln_engine_gpu_tests COMMAND kiln_engine_tests --gtest_filter=EngineLayers.*:EngineCuda.*:EngineMemoryViews.*:EngineAttentionViews.*:PrecisionPolicy.*)
  set_tests_properties(kiln_engine_gpu_tests PROPERTIES ENVIRONMENT "KILN_TEST_BACKEND=cuda;${KILN_TEST_ENV}" LABELS "engine;gpu")
endif()
# Tests of the CUDA backend's internals (tests/engine/backends/cuda/) compile only where the backend is built.
if(KILN_CUDA_ENABLED)
  file(GLOB _kiln_cuda_tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/engine/backends/cuda/*_test.cpp)
  set_source_files_properties(${_kiln_cuda_tests} PROPERTIES COMPILE_DEFINITIONS KILN_HAVE_CUDA=1)
endif()
