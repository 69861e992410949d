# The lowering tests check numerics through the libtorch reference executor when it is built.
if(KILN_WITH_TORCH)
  target_compile_definitions(kiln_lowering_tests PRIVATE KILN_LOWERING_HAVE_REFERENCE=1)
endif()
