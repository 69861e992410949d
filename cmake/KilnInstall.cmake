# `cmake --install build --prefix P`: the public headers (include/kiln), the SDK's shared libraries
# (cmake/KilnSharedLibraries.cmake: libkiln_runtime_core, libkiln_runtime_torch, libkiln_compiler), the kiln
# command, a CMake package (find_package(Kiln)) and pkg-config files (kiln.pc, kiln-torch.pc). examples/cpp is a
# project that uses it.
#   Kiln::runtime        the torch-free runtime (HostModule): links nothing of libtorch.
#   Kiln::runtime_torch  CompiledModule (at::Tensor API) and the PyTorch plug-in; carries libtorch.
#   Kiln::compiler       the compiler; carries Kiln::runtime_torch.
# The torch targets are in their own export set: KilnConfig.cmake defines them only where find_package(Torch)
# succeeds, so a project on Kiln::runtime needs no libtorch to configure, build or run.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Kiln)
# Installed libraries find each other ($ORIGIN: the plug-in next to the core) and the libraries they were linked
# with outside the system's folders (CUDA, cuDNN).
set_target_properties(kiln_runtime_core_shared kiln_runtime_torch_shared kiln_compiler_shared PROPERTIES
                      INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS kiln_runtime_core_shared EXPORT KilnTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS kiln_runtime_torch_shared kiln_compiler_shared EXPORT KilnTorchTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS kiln RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT KilnTargets NAMESPACE Kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})
install(EXPORT KilnTorchTargets NAMESPACE Kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/KilnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/KilnConfig.cmake INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/KilnConfig.cmake ${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake
        DESTINATION ${KILN_INSTALL_CMAKEDIR})

# pkg-config: kiln.pc is the torch-free runtime; kiln-torch.pc adds the libtorch runtime and the compiler.
get_filename_component(kiln_torch_libdir "${TORCH_LIBRARY}" DIRECTORY)  # TorchConfig.cmake finds TORCH_LIBRARY
set(KILN_PC_TORCH_LIBS "-L${kiln_torch_libdir} -Wl,-rpath,${kiln_torch_libdir} -ltorch -ltorch_cpu -lc10")
file(RELATIVE_PATH KILN_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" KILN_PC_TO_PREFIX "${KILN_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/kiln.pc.in ${PROJECT_BINARY_DIR}/kiln.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/kiln-torch.pc.in ${PROJECT_BINARY_DIR}/kiln-torch.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kiln.pc ${PROJECT_BINARY_DIR}/kiln-torch.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
