# The git revision `kiln --version` prints, read at configure time: -DKILN_GIT_REVISION=... or the environment's
# KILN_GIT_REVISION (a container build without .git) win, else `git describe --always --dirty` of the source tree,
# else "unknown" (not a git checkout, no git). Generates ${PROJECT_BINARY_DIR}/generated/version.cpp
# (include/kiln/support/version.h), compiled into kiln_support.
if(NOT KILN_GIT_REVISION)
  if(DEFINED ENV{KILN_GIT_REVISION} AND NOT "$ENV{KILN_GIT_REVISION}" STREQUAL "")
    set(KILN_GIT_REVISION "$ENV{KILN_GIT_REVISION}")
  else()
    find_package(Git QUIET)
    if(GIT_FOUND)
      execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} describe --always --dirty --abbrev=12
                      OUTPUT_VARIABLE KILN_GIT_REVISION RESULT_VARIABLE kiln_git_result ERROR_QUIET
                      OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(NOT kiln_git_result EQUAL 0)
        set(KILN_GIT_REVISION "")
      endif()
    endif()
  endif()
endif()
if(NOT KILN_GIT_REVISION)
  set(KILN_GIT_REVISION "unknown")
endif()
# Only characters that are safe inside the generated C++ string literal.
string(REGEX REPLACE "[^A-Za-z0-9._+-]" "_" KILN_GIT_REVISION "${KILN_GIT_REVISION}")
message(STATUS "Kiln ${PROJECT_VERSION}, revision ${KILN_GIT_REVISION}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.cpp.in ${PROJECT_BINARY_DIR}/generated/version.cpp @ONLY)
