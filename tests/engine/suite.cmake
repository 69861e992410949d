# The layer tests again on the CUDA backend: label gpu (CI runs `ctest -LE gpu`); on a machine without a GPU
# every test skips with a message.
if(KILN_CUDA_ENABLED)
  add_test(NAME kiln_engine_gpu_tests COMMAND kiln_engine_tests --gtest_filter=EngineLayers.*:EngineCuda.*:EngineMemoryViews.*:EngineAttentionViews.*:PrecisionPolicy.*:BackendSweep.*)
  set_tests_properties(kiln_engine_gpu_tests PROPERTIES ENVIRONMENT "KILN_TEST_BACKEND=cuda;${KILN_TEST_ENV}" LABELS "engine;gpu")
endif()
# Tests of the CUDA backend's internals (tests/engine/backends/cuda/) compile only where the backend is built.
if(KILN_CUDA_ENABLED)
  file(GLOB _kiln_cuda_tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/engine/backends/cuda/*_test.cpp)
  set_source_files_properties(${_kiln_cuda_tests} PROPERTIES COMPILE_DEFINITIONS KILN_HAVE_CUDA=1)
endif()
# OnednnConvolution.RunsWhereSgemmCannot (tests/engine/backends/cpu/kernels/onednn_convolution_test.cpp) runs its
# checks in a child process with this library preloaded: oneDNN's sgemm then cannot run, as in a process that
# also loads pip's torch.
add_library(kiln_test_foreign_onednn_sgemm SHARED ${PROJECT_SOURCE_DIR}/tests/engine/backends/cpu/foreign_onednn_sgemm.c)
add_dependencies(kiln_engine_tests kiln_test_foreign_onednn_sgemm)
target_compile_definitions(kiln_engine_tests PRIVATE
                           KILN_FOREIGN_ONEDNN_SGEMM_LIB="$<TARGET_FILE:kiln_test_foreign_onednn_sgemm>")
# The backend-conformance sweep's driver and case list (tests/engine/sweep/; the test itself is
# backend_sweep_test.cpp); the row listing and the refusal check see the CUDA kernel table where the backend is
# built.
file(GLOB _kiln_sweep_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/engine/sweep/sweep_*.cpp)
target_sources(kiln_engine_tests PRIVATE ${_kiln_sweep_sources})
if(KILN_CUDA_ENABLED)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/tests/engine/sweep/sweep_rows.cpp
                              ${PROJECT_SOURCE_DIR}/tests/engine/sweep/backend_sweep_test.cpp PROPERTIES
                              COMPILE_DEFINITIONS KILN_HAVE_CUDA=1)
endif()
# The cpu INT8 tests again with oneDNN limited to AVX2 (ONEDNN_MAX_CPU_ISA, which onednn::has_vnni honours): on a
# VNNI machine too, they then run the path of a CPU without VNNI (7-bit weights, signed inputs stored as u8 with
# zero point 128), which no other test there reaches.
add_test(NAME kiln_engine_int8_without_vnni_tests COMMAND kiln_engine_tests
         --gtest_filter=OnednnInt8Exact.*:Int8Engine.*:Int8Quantization.*)
set_tests_properties(kiln_engine_int8_without_vnni_tests PROPERTIES
                     ENVIRONMENT "ONEDNN_MAX_CPU_ISA=AVX2;${KILN_TEST_ENV}" LABELS "engine")
