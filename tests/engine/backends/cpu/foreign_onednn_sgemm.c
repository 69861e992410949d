/* A stand-in for a second oneDNN in the process (pip's libtorch_cpu.so links one in), loaded before
   libdnnl.so.2 by LD_PRELOAD in the child process of OnednnConvolution.RunsWhereSgemmCannot
   (kernels/onednn_convolution_test.cpp). Both oneDNNs export, weak and of default visibility, the
   std::call_once helper that runs the one-time generation of oneDNN's f32 sgemm kernels (the static invoker
   of the lambda libstdc++ wraps around gemm_info_t<float, float, float>::jit_init's lambda). The dynamic
   linker binds libdnnl's call to the first copy loaded, which initialises the other library's kernel tables:
   libdnnl's stay empty, and every sgemm in libdnnl then fails with status unimplemented. This copy does
   nothing, which is what libdnnl sees either way. */
void _ZZNSt9once_flag18_Prepare_executionC4IZSt9call_onceIZN4dnnl4impl3cpu3x6411gemm_info_tIfffE8jit_initEvEUlvE_JEEvRS_OT_DpOT0_EUlvE_EERSB_ENUlvE_4_FUNEv(
    void) {}
