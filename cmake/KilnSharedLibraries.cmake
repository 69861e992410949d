# The SDK's shared libraries, linked from the objects the static layers are built from (no second compile; the
# in-tree kiln command, tests and Python package link the static layers). `cmake --install` installs these:
#   libkiln_runtime_core.so   support, ir, engine, runtime_core: the torch-free runtime (HostModule), Kiln::runtime.
#                             Links oneDNN, OpenSSL's libcrypto, zlib, (cuda) the CUDA libraries; never libtorch.
#   libkiln_runtime_torch.so  frontend, runtime: CompiledModule (at::Tensor in and out) and the PyTorch plug-in
#                             HostModule loads for modules with PyTorch steps; Kiln::runtime_torch.
#   libkiln_compiler.so       settings, lowering, conversion, partitioning, compiler; Kiln::compiler.
# They sit in build/lib, so the plug-in lies next to the core there as it does in an installed prefix.
# kiln_add_shared_library(NAME LAYERS ... DEPS ...): libNAME.so from the layers' objects, linking DEPS (the shared
# libraries below it) PUBLIC and the layers' own dependencies other than Kiln's layers PRIVATE; --no-undefined makes
# a missing dependency a link error here, not at a user's.
function(kiln_add_shared_library name)
  cmake_parse_arguments(ARG "" "EXPORT_NAME" "LAYERS;DEPS" ${ARGN})
  set(objects)
  set(external)
  foreach(layer ${ARG_LAYERS})
    list(APPEND objects $<TARGET_OBJECTS:kiln_${layer}>)
    get_target_property(layer_deps kiln_${layer} INTERFACE_LINK_LIBRARIES)
    foreach(dep ${layer_deps})
      if(NOT dep MATCHES "^kiln_")
        list(APPEND external ${dep})
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES external)
  add_library(${name}_shared SHARED ${objects})
  set_target_properties(${name}_shared PROPERTIES OUTPUT_NAME ${name} EXPORT_NAME ${ARG_EXPORT_NAME}
                        LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib LINKER_LANGUAGE CXX
                        BUILD_RPATH "${PROJECT_BINARY_DIR}/lib" INSTALL_RPATH "$ORIGIN")
  target_include_directories(${name}_shared PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                             $<INSTALL_INTERFACE:include>)
  target_link_libraries(${name}_shared PUBLIC ${ARG_DEPS} PRIVATE ${external})
  target_link_options(${name}_shared PRIVATE -Wl,--no-undefined)
endfunction()

kiln_add_shared_library(kiln_runtime_core EXPORT_NAME runtime LAYERS support ir engine runtime_core)
kiln_add_shared_library(kiln_runtime_torch EXPORT_NAME runtime_torch LAYERS frontend runtime
                        DEPS kiln_runtime_core_shared ${TORCH_LIBRARIES})
kiln_add_shared_library(kiln_compiler EXPORT_NAME compiler LAYERS settings lowering conversion partitioning compiler
                        DEPS kiln_runtime_torch_shared)
