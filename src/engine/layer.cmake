# The engine's sub-layers, bottom up: ops (each layer kind declared once), core (network, builder, plan, contexts),
# backends (kernel tables); each includes only the ones before it (scripts/check_layering.py).
kiln_sublayers(engine ORDER ops core backends)

# Extra dependencies of kiln_engine: oneDNN for the CPU backend's fast kernels (never libtorch).
find_package(dnnl REQUIRED)
target_link_libraries(kiln_${name} PUBLIC DNNL::dnnl)

# The thread pool (engine/core/thread_pool.cpp) runs Kiln's kernels on OpenMP's team, the threads Debian's oneDNN
# (built on libgomp) runs on: one set of threads. GCC only (clang's OpenMP is another runtime, libomp); only that
# file is compiled with OpenMP, and only the library is linked (LINK_ONLY), so no other file's flags change.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  find_package(OpenMP COMPONENTS CXX)
endif()
if(OpenMP_CXX_FOUND)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/engine/core/thread_pool.cpp TARGET_DIRECTORY kiln_${name}
                              PROPERTIES COMPILE_OPTIONS "${OpenMP_CXX_FLAGS}" COMPILE_DEFINITIONS KILN_THREADS_OPENMP=1)
  target_link_libraries(kiln_${name} PUBLIC "$<LINK_ONLY:OpenMP::OpenMP_CXX>")
endif()

# The CPU backend's vectorized kernels (src/engine/backends/cpu/<family>/*.cpp, every folder but onednn/, whose
# files call oneDNN) are plain loops written for GCC's vectorizer. At -O2, GCC 12's "very cheap" cost model
# leaves every loop whose trip count is not a known multiple of the vector width scalar (GPT-2's tanh GELU ran
# one float per instruction: 14 ms of 393216 elements), so these files use -O3 (the dynamic cost model) outside
# Debug builds, and -fno-math-errno so std::sqrt vectorizes. No -ffast-math: float sums keep their written order.
file(GLOB _kiln_cpu_kernel_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/engine/backends/cpu/*/*.cpp)
list(FILTER _kiln_cpu_kernel_sources EXCLUDE REGEX "/src/engine/backends/cpu/onednn/")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set_source_files_properties(${_kiln_cpu_kernel_sources} TARGET_DIRECTORY kiln_${name}
                              PROPERTIES COMPILE_OPTIONS "$<$<NOT:$<CONFIG:Debug>>:-O3>;-fno-math-errno")
endif()
# Files with flags of their own (these and thread_pool.cpp above) cannot share a unity batch; they stay out of the
# batches with every compiler, so GCC's build and the clang sanitizer build batch the same files.
set_source_files_properties(${_kiln_cpu_kernel_sources} ${PROJECT_SOURCE_DIR}/src/engine/core/thread_pool.cpp
                            TARGET_DIRECTORY kiln_${name} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)

# The CUDA backend (src/engine/backends/cuda/**, .cpp and .cu) is built only when the top level enabled CUDA
# (KILN_CUDA_ENABLED); otherwise its sources are dropped from the glob and "cuda" stays in the backend table
# as an error saying the build has no CUDA. cuDNN (convolution) is used when found (CUDNN_ROOT may point at
# it, e.g. the nvidia-cudnn Python wheel's folder).
get_target_property(_kiln_engine_sources kiln_${name} SOURCES)
list(FILTER _kiln_engine_sources EXCLUDE REGEX "/src/engine/backends/cuda/")
set_property(TARGET kiln_${name} PROPERTY SOURCES ${_kiln_engine_sources})
if(KILN_CUDA_ENABLED)
  file(GLOB_RECURSE _kiln_cuda_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/engine/backends/cuda/*.cpp
       ${PROJECT_SOURCE_DIR}/src/engine/backends/cuda/*.cu)
  target_sources(kiln_${name} PRIVATE ${_kiln_cuda_sources})
  # Each CUDA kernel file defines its table rows' applies() and create() (kernel_table.h): compiled file by file.
  set_source_files_properties(${_kiln_cuda_sources} TARGET_DIRECTORY kiln_${name} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  target_compile_definitions(kiln_${name} PRIVATE KILN_HAVE_CUDA=1)
  target_link_libraries(kiln_${name} PUBLIC CUDA::cudart CUDA::cublasLt CUDA::nvrtc)
  set_target_properties(kiln_${name} PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
  target_compile_options(kiln_${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-fPIC>)
  find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDNN_ROOT} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
  find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 HINTS ${CUDNN_ROOT} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64)
  if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
    message(STATUS "Kiln CUDA backend: cuDNN ${CUDNN_LIBRARY}")
    target_include_directories(kiln_${name} PRIVATE ${CUDNN_INCLUDE_DIR})
    target_link_libraries(kiln_${name} PUBLIC ${CUDNN_LIBRARY})
    target_compile_definitions(kiln_${name} PRIVATE KILN_HAVE_CUDNN=1)
  else()
    message(STATUS "Kiln CUDA backend: cuDNN not found (convolution unsupported on cuda)")
  endif()
endif()
