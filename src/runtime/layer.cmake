# The PyTorch plug-in names the Kiln build it belongs to (include/kiln/runtime/torch_plugin.h): compiled into it, not
# read from the torch-free runtime it is loaded next to, so that HostModule can refuse another build's plug-in.
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/runtime/torch_plugin_impl.cpp TARGET_DIRECTORY kiln_${name}
                            PROPERTIES COMPILE_DEFINITIONS "KILN_PLUGIN_BUILD=\"${PROJECT_VERSION} ${KILN_GIT_REVISION}\"")
# libtorch's ATen headers, parsed once for the layer (11 of its 13 files include them): a file then compiles in a
# third of the time (src/runtime/torch_convert.cpp 14.2 s -> 4.4 s on the 2-core machine; the header costs 27 s once).
target_precompile_headers(kiln_${name} PRIVATE <ATen/ATen.h>)
