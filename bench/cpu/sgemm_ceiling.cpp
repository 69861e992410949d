// The fp32 matrix-multiply ceiling of one core: oneDNN's matmul primitive (weights pre-packed in its
// preferred layout, as Kiln's matmul kernel prepares them) and dnnl_sgemm on an M x K by K x N product, the
// minimum and median of 15 calls. Not part of the build:
//   g++ -O2 bench/cpu/sgemm_ceiling.cpp -o /tmp/sgemm_ceiling -ldnnl
//   OMP_NUM_THREADS=1 /tmp/sgemm_ceiling 1024 1024 1024
// SGEMM_POST=gelu_erf (or swish) adds that eltwise post-op to the matmul; SGEMM_COPIES=N prepares N copies of
// the weights and cycles through them, so that with N copies larger than the last-level cache every call
// reads its weights from DRAM, as in a model whose weights exceed it (ViT's 340 MB).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <typename F>
void report(const char* what, int m, int n, int k, F call) {
  std::vector<double> t;
  for (int r = 0; r < 15; ++r) {
    const double t0 = seconds();
    call();
    t.push_back(seconds() - t0);
  }
  std::sort(t.begin(), t.end());
  const double gflop = 2.0 * m * n * k / 1e9;
  std::printf("%-7s %dx%dx%d: min %.3f ms (%.0f GFLOP/s), median %.3f ms (%.0f GFLOP/s)\n", what, m, n, k,
              t[0] * 1e3, gflop / t[0], t[t.size() / 2] * 1e3, gflop / t[t.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s M N K\n", argv[0]);
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  using dnnl::memory;
  using DT = memory::data_type;
  using Tag = memory::format_tag;
  std::vector<float> a(static_cast<size_t>(m) * k, 1.0f), b(static_cast<size_t>(k) * n, 0.5f),
      c(static_cast<size_t>(m) * n);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  memory src({{m, k}, DT::f32, Tag::ab}, eng, a.data()), dst({{m, n}, DT::f32, Tag::ab}, eng, c.data());
  dnnl::post_ops post;
  const char* post_name = std::getenv("SGEMM_POST");
  if (post_name != nullptr && std::strcmp(post_name, "gelu_erf") == 0) {
    post.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
  } else if (post_name != nullptr && std::strcmp(post_name, "swish") == 0) {
    post.append_eltwise(1.0f, dnnl::algorithm::eltwise_swish, 1.0f, 0.0f);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(post);
  dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(src.get_desc(), memory::desc({k, n}, DT::f32, Tag::any), dst.get_desc()), attr, eng);
  memory user({{k, n}, DT::f32, Tag::ab}, eng, b.data());
  const int copies = std::getenv("SGEMM_COPIES") ? std::max(1, std::atoi(std::getenv("SGEMM_COPIES"))) : 1;
  std::vector<memory> packed;
  for (int i = 0; i < copies; ++i) {
    packed.emplace_back(pd.weights_desc(), eng);
    dnnl::reorder(user, packed.back()).execute(s, user, packed.back());
  }
  dnnl::matmul mm(pd);
  std::printf("matmul implementation: %s, post-op %s, %d weight copies\n", pd.impl_info_str(),
              post_name ? post_name : "none", copies);
  int next = 0;
  report("matmul", m, n, k, [&] {
    mm.execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, packed[next++ % copies]}, {DNNL_ARG_DST, dst}});
    s.wait();
  });
  report("sgemm", m, n, k,
         [&] { dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n); });
  return 0;
}
