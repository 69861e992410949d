# `cmake --install build --prefix P`: the public headers (include/kiln), the layers' static archives, the kiln
# command, a CMake package (find_package(Kiln): imported targets Kiln::runtime, Kiln::compiler and the layers below
# them, each carrying its dependencies) and a pkg-config file (kiln.pc). examples/cpp is a project that uses it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Kiln)
set(kiln_installed_layers support ir engine settings frontend lowering conversion partitioning runtime_core runtime compiler)
set(kiln_installed_targets)
foreach(layer ${kiln_installed_layers})
  set_target_properties(kiln_${layer} PROPERTIES EXPORT_NAME ${layer})
  list(APPEND kiln_installed_targets kiln_${layer})
endforeach()

install(TARGETS ${kiln_installed_targets} EXPORT KilnTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS kiln RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT KilnTargets NAMESPACE Kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})

# Kiln::engine links OpenMP's runtime where the thread pool runs on it (src/engine/layer.cmake).
if(TARGET OpenMP::OpenMP_CXX)
  set(KILN_THREADS_OPENMP ON)
else()
  set(KILN_THREADS_OPENMP OFF)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/KilnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/KilnConfig.cmake INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/KilnConfig.cmake ${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake
        DESTINATION ${KILN_INSTALL_CMAKEDIR})

# pkg-config: the archives in link order, then what they link (pkg-config has no imported targets).
set(KILN_PC_CFLAGS "")
set(KILN_PC_LIBS "-ldnnl -lcrypto -lz -lpthread")
if(KILN_THREADS_OPENMP)
  string(APPEND KILN_PC_LIBS " -lgomp")
endif()
if(KILN_CUDA_ENABLED)
  string(APPEND KILN_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lcublasLt -lnvrtc")
  if(CUDNN_LIBRARY)
    string(APPEND KILN_PC_LIBS " ${CUDNN_LIBRARY}")
  endif()
endif()
get_filename_component(kiln_torch_libdir "${TORCH_LIBRARY}" DIRECTORY)  # TorchConfig.cmake finds TORCH_LIBRARY
string(APPEND KILN_PC_LIBS " -L${kiln_torch_libdir} -Wl,-rpath,${kiln_torch_libdir} -ltorch -ltorch_cpu -lc10")
file(RELATIVE_PATH KILN_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" KILN_PC_TO_PREFIX "${KILN_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/kiln.pc.in ${PROJECT_BINARY_DIR}/kiln.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kiln.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
