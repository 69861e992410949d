# The PyTorch plug-in names the Kiln build it belongs to (include/kiln/runtime/torch_plugin.h): compiled into it, not
# read from the torch-free runtime it is loaded next to, so that HostModule can refuse another build's plug-in.
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/runtime/torch_plugin_impl.cpp TARGET_DIRECTORY kiln_${name}
                            PROPERTIES COMPILE_DEFINITIONS "KILN_PLUGIN_BUILD=\"${PROJECT_VERSION} ${KILN_GIT_REVISION}\"")
