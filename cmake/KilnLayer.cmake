# Standard headers most of Kiln's C++ files include, precompiled once per target (kiln_precompile_std_headers):
# parsing them took 1.6 s of every file's compile (engine files compile in 2.6-8.7 s on the 2-core machine).
# Standard headers only: a project header in the list would let a file that forgets to include it compile.
set(KILN_STD_HEADERS <algorithm> <cmath> <cstdint> <cstring> <functional> <map> <memory> <mutex> <optional> <set>
                     <sstream> <string> <unordered_map> <utility> <vector>)
function(kiln_precompile_std_headers target)
  foreach(header ${KILN_STD_HEADERS})
    target_precompile_headers(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${header}>)
  endforeach()
endfunction()

# kiln_unity_build(TARGET): TARGET's C++ files compiled KILN_UNITY_BATCH at a time when KILN_UNITY_BUILD is on.
# Names at file scope (anonymous namespaces included) then share a translation unit with the batch's other files:
# two files of one target may not define the same helper; shared ones live in a header of the target's folder.
function(kiln_unity_build target)
  if(KILN_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${KILN_UNITY_BATCH})
  endif()
endfunction()

# kiln_add_layer(NAME DEPS ...): a static library kiln_NAME from every .cpp under src/NAME/,
# with include/ public. Optional per-layer additions live in src/NAME/layer.cmake.
function(kiln_add_layer name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  if(NOT sources)
    set(sources ${PROJECT_SOURCE_DIR}/cmake/empty.cpp)
  endif()
  add_library(kiln_${name} STATIC ${sources})
  target_include_directories(kiln_${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                             $<INSTALL_INTERFACE:include> PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(kiln_${name} PUBLIC ${ARG_DEPS})
  set_target_properties(kiln_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  kiln_precompile_std_headers(kiln_${name})
  kiln_unity_build(kiln_${name})
  if(EXISTS ${PROJECT_SOURCE_DIR}/src/${name}/layer.cmake)
    include(${PROJECT_SOURCE_DIR}/src/${name}/layer.cmake)
  endif()
endfunction()

# kiln_sublayers(LAYER ORDER SUB...): the sub-layers of LAYER, bottom up: folders src/LAYER/SUB/ of which each
# includes only the ones before it (scripts/check_layering.py reads this call from src/LAYER/layer.cmake and checks
# the includes). Every source of the layer lies in one of them, so no folder escapes the order.
function(kiln_sublayers layer)
  cmake_parse_arguments(ARG "" "" "ORDER" ${ARGN})
  set(dir ${PROJECT_SOURCE_DIR}/src/${layer})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${dir}/*.cpp ${dir}/*.h ${dir}/*.cu ${dir}/*.cuh)
  foreach(source ${sources})
    file(RELATIVE_PATH relative ${dir} ${source})
    string(REGEX MATCH "^[^/]+" top ${relative})
    if(NOT top IN_LIST ARG_ORDER)
      string(REPLACE ";" " < " order "${ARG_ORDER}")
      message(FATAL_ERROR "src/${layer}/${relative} lies outside the sub-layers of ${layer} (${order})")
    endif()
  endforeach()
endfunction()

# kiln_add_test_suite(LAYER DEPS ...): one gtest binary kiln_LAYER_tests from tests/LAYER/**/*_test.cpp, each gtest
# suite a ctest "LAYER:Suite" labeled LAYER (kiln_add_gtest_suites). A suite.cmake that sets KILN_SUITE_GPU_TESTS (a
# gtest filter of tests that need a GPU) leaves those tests out of those ctests and runs them as one ctest
# kiln_LAYER_gpu_tests labeled "LAYER;gpu" (only when the CUDA backend is built): CI runs `ctest -LE gpu`, the GPU
# machine `ctest -L gpu`.
# Every test runs with KILN_CACHE_DIR in the build tree (KILN_TEST_ENV): the default engine and timing caches of
# compiles inside tests stay there, so tactic choices timed while tests run side by side (a loaded machine) never
# reach the caches that later compiles on the machine read.
# OpenMP threads (oneDNN's, libtorch's) sleep as soon as a parallel region ends (OMP_WAIT_POLICY=PASSIVE, as the
# kiln command sets it), instead of spinning on cores that tests running side by side need.
set(KILN_TEST_ENV "KILN_CACHE_DIR=${PROJECT_BINARY_DIR}/test-cache;OMP_WAIT_POLICY=PASSIVE")

# kiln_add_gtest_suites(TARGET LAYER LABELS EXCLUDE): after TARGET links, cmake/KilnGtestSuites.cmake lists its
# tests and writes one ctest per gtest suite (name "LAYER:Suite", labels LAYER and LABELS, tests matching the gtest
# filter EXCLUDE left out), which ctest reads through the directory's TEST_INCLUDE_FILES. One process per suite, not
# per test: a binary linked with libtorch takes about a second to start.
function(kiln_add_gtest_suites target layer labels exclude)
  set(ctest_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake)
  string(REPLACE ";" "|" env "${KILN_TEST_ENV}")
  string(REPLACE ";" "|" labels "${labels}")
  add_custom_command(TARGET ${target} POST_BUILD BYPRODUCTS ${ctest_file} VERBATIM
                     COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${target}> -DOUT=${ctest_file} -DLAYER=${layer}
                             -DLABELS=${labels} -DEXCLUDE=${exclude} -DENV=${env}
                             -P ${PROJECT_SOURCE_DIR}/cmake/KilnGtestSuites.cmake)
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake)
  file(WRITE ${include_file} "if(EXISTS [==[${ctest_file}]==])\n  include([==[${ctest_file}]==])\nelse()\n"
       "  add_test([==[${target}_NOT_BUILT]==] [==[${target}_NOT_BUILT]==])\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()

function(kiln_add_test_suite layer)
  cmake_parse_arguments(ARG "" "" "DEPS;LABELS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/${layer}/*_test.cpp)
  if(NOT sources)
    return()
  endif()
  add_executable(kiln_${layer}_tests ${sources})
  target_include_directories(kiln_${layer}_tests PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(kiln_${layer}_tests PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(kiln_${layer}_tests PRIVATE KILN_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data")
  # Test code is compiled for build speed: -Og with line tables (-g1) compiles a test file in about a third of the
  # time -O2 -g takes (tests/frontend/synthetic_test.cpp: 13 s vs 37 s on the 2-core machine), and test files
  # are half of a full build's compile time. The libraries under test keep the build type's flags.
  if(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
    target_compile_options(kiln_${layer}_tests PRIVATE -Og -g1)
  endif()
  # gtest and the standard headers every test file includes, parsed once per suite: a test file then compiles in
  # two thirds of the time (tests/conversion/converters/reduce_test.cpp 4.7 s -> 3.0 s; the header costs 6 s once).
  target_precompile_headers(kiln_${layer}_tests PRIVATE <gtest/gtest.h> <random>)
  kiln_precompile_std_headers(kiln_${layer}_tests)
  kiln_unity_build(kiln_${layer}_tests)
  set(KILN_SUITE_GPU_TESTS "")
  if(EXISTS ${PROJECT_SOURCE_DIR}/tests/${layer}/suite.cmake)
    include(${PROJECT_SOURCE_DIR}/tests/${layer}/suite.cmake)
  endif()
  kiln_add_gtest_suites(kiln_${layer}_tests ${layer} "${ARG_LABELS}" "${KILN_SUITE_GPU_TESTS}")
  if(KILN_SUITE_GPU_TESTS AND KILN_CUDA_ENABLED)
    add_test(NAME kiln_${layer}_gpu_tests COMMAND kiln_${layer}_tests --gtest_filter=${KILN_SUITE_GPU_TESTS})
    set_tests_properties(kiln_${layer}_gpu_tests PROPERTIES LABELS "${layer};gpu" ENVIRONMENT "${KILN_TEST_ENV}")
  endif()
endfunction()
