# Run as a script after a test binary links (cmake -P, from kiln_add_test_suite in KilnLayer.cmake): lists the
# binary's tests and writes OUT, a ctest file with one ctest per gtest suite ("LAYER:Suite", filter "Suite.*").
# One process per suite instead of one per test: a binary linked with libtorch takes about a second to start, and
# starting 1,300 of them was half of CI's test time.
#   EXE      the test binary              LAYER    the ctest name prefix and first label
#   OUT      the ctest file to write      LABELS   further labels (joined by '|')
#   EXCLUDE  gtest filter of tests left out (the GPU tests, run by their own ctest), may be empty
#   ENV      the tests' ENVIRONMENT (entries joined by '|')
cmake_minimum_required(VERSION 3.25)
if(EXCLUDE)
  set(list_filter "--gtest_filter=-${EXCLUDE}")
  set(exclude_suffix "-${EXCLUDE}")
else()
  set(list_filter "--gtest_filter=*")
  set(exclude_suffix "")
endif()
execute_process(COMMAND "${EXE}" --gtest_list_tests ${list_filter} OUTPUT_VARIABLE listing ERROR_VARIABLE errors
                RESULT_VARIABLE status TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${EXE} --gtest_list_tests failed (${status}): ${errors}")
endif()

# Suite lines start at column 0 and end with '.' (a "  # TypeParam = ..." comment may follow); test lines are
# indented. A suite whose tests are all excluded lists no test lines and gets no ctest.
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
set(current "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(current "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^  [^ ]" AND current AND NOT current IN_LIST suites)
    list(APPEND suites "${current}")
  endif()
endforeach()

# Lists arrive joined by '|' (a ';' would split the command line that runs this script).
string(REPLACE "|" ";" env "${ENV}")
string(REPLACE "|" ";" labels "${LAYER}|${LABELS}")
string(REGEX REPLACE ";$" "" labels "${labels}")
set(text "# Written by cmake/KilnGtestSuites.cmake from ${EXE} --gtest_list_tests.\n")
foreach(suite IN LISTS suites)
  string(APPEND text "add_test([==[${LAYER}:${suite}]==] [==[${EXE}]==] [==[--gtest_filter=${suite}.*${exclude_suffix}]==])\n"
         "set_tests_properties([==[${LAYER}:${suite}]==] PROPERTIES LABELS \"${labels}\" ENVIRONMENT \"${env}\")\n")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
