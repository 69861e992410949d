# Extra dependencies of kiln_engine: oneDNN for the CPU backend's fast kernels (never libtorch).
find_package(dnnl REQUIRED)
target_link_libraries(kiln_${name} PUBLIC DNNL::dnnl)
