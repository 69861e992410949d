// The paths of the data-movement kernels on shapes that select each of them (on the CUDA backend:
// strided_copy_plan.h): inner dims copied as 16-byte vectors (the head split/merge permutes of attention),
// the fallback when offsets or strides break the alignment, tiled transposes whose sizes are not multiples
// of the tile, ranks 1 to 6, shapes large enough for many blocks, and gather/padding with their 32-bit index
// math; every element size (fp16, fp32, int64, bool). Each layer runs on the backend under test and on the
// cpu backend (the reference); a copy must give the same bytes: tolerance 0. Shuffles are also checked
// against a naive permutation of the input's bytes, so the cpu run alone checks something too.

#include <cstring>

#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

#define KILN_REQUIRE_TEST_BACKEND()                                                 \
  std::string why_unavailable;                                                      \
  if (test_backend() != "cpu" && !shared_backend(test_backend(), &why_unavailable)) \
  GTEST_SKIP() << "backend '" << test_backend() << "' is not available here: " << why_unavailable

const DType kElementTypes[] = {DType::Float16, DType::Float32, DType::Int64, DType::Bool};

/// Random values that tell elements apart: wide ranges for numbers, both values for Bool.
HostTensor movement_input(DType dt, const Dims& dims, std::mt19937& rng) {
  return dt == DType::Bool ? random_tensor(dt, dims, rng, -1.0, 1.0)
                           : random_tensor(dt, dims, rng, -1000.0, 1000.0);
}

/// x permuted (out dim k = in dim perm[k]), byte by byte.
HostTensor permuted(const HostTensor& x, const std::vector<int64_t>& perm) {
  Dims d = x.sizes(), od;
  for (int64_t p : perm) od.push_back(d[p]);
  auto st = strides(d);
  size_t es = dtype_size(x.dtype());
  HostTensor y(x.dtype(), od);
  for (int64_t i = 0; i < y.numel(); ++i) {
    auto idx = unravel(i, od);
    int64_t off = 0;
    for (size_t k = 0; k < perm.size(); ++k) off += idx[k] * st[perm[k]];
    std::memcpy(y.mutable_data() + i * es, x.data() + off * es, es);
  }
  return y;
}

void expect_same_bytes(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  size_t es = dtype_size(got.dtype());
  int64_t bad = 0;
  std::string first;
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (std::memcmp(got.data() + i * es, want.data() + i * es, es) == 0) continue;
    if (++bad <= 5) {
      first += " [" + std::to_string(i) + "] got " + std::to_string(got.get_as_double(i)) + " want " +
               std::to_string(want.get_as_double(i));
    }
  }
  if (bad) ADD_FAILURE() << what << ": " << bad << " of " << got.numel() << " elements differ:" << first;
}

/// Builds `build_fn` over inputs of the dtypes and dims of `inputs` (named in0, in1, ...) and runs it on the
/// cpu backend and, when another backend is under test, on that one too; expects the same output bytes, and
/// the cpu output to equal `want` when given.
void check_copy(const std::string& what, const std::vector<HostTensor>& inputs, const BuildFn& build_fn,
                const HostTensor* want = nullptr) {
  SCOPED_TRACE(what + " " + dtype_name(inputs[0].dtype()));
  auto run_on = [&](const std::string& backend) {
    Network net;
    std::vector<Tensor*> ins;
    std::map<std::string, HostTensor> feed;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::string name = "in" + std::to_string(i);
      ins.push_back(net.add_input(name, inputs[i].dtype(), inputs[i].sizes()));
      feed[name] = inputs[i];
    }
    Tensor* out = build_fn(net, ins);
    out->set_name("out");
    net.mark_output(out);
    BuilderConfig config;
    config.backend = backend;
    config.strongly_typed = true;  // fp16 inputs stay fp16
    return run(build(net, config), feed)[0];
  };
  HostTensor ref = run_on("cpu");
  if (want) expect_same_bytes(ref, *want, what + " (cpu vs naive)");
  if (test_backend() != "cpu")
    expect_same_bytes(run_on(test_backend()), ref, what + " (" + test_backend() + " vs cpu)");
}

void check_permute(const std::string& what, DType dt, const Dims& dims, const std::vector<int64_t>& perm,
                   std::mt19937& rng) {
  HostTensor x = movement_input(dt, dims, rng), want = permuted(x, perm);
  check_copy(
      what, {x},
      [&](Network& n, const std::vector<Tensor*>& in) {
        return n.add_shuffle("", in[0], ShuffleParams{perm, false, {}, {}});
      },
      &want);
}

TEST(EngineLayers, MovementVectorizedInnerDims) {
  KILN_REQUIRE_TEST_BACKEND();
  std::mt19937 rng(501);
  for (DType dt : kElementTypes) {
    // Attention heads: [B, S, H, D] <-> [B, H, S, D], D = 64 contiguous on both sides (16-byte vectors).
    check_permute("head split", dt, {4, 37, 12, 64}, {0, 2, 1, 3}, rng);
    check_permute("head merge", dt, {4, 12, 37, 64}, {0, 2, 1, 3}, rng);
    // The qkv split [B, S, 3, H, D] -> [3, B, H, S, D].
    check_permute("qkv split", dt, {2, 37, 3, 12, 64}, {2, 0, 3, 1, 4}, rng);
    // D = 6: rows of 12 (fp16), 24, 48 or 6 bytes take narrower vectors.
    check_permute("narrow vectors", dt, {3, 50, 7, 6}, {0, 2, 1, 3}, rng);
    // A contiguous copy merges into one dim (the Shuffle of a first_perm and a second_perm through the
    // workspace, then an aligned slice of whole rows).
    HostTensor x = movement_input(dt, {6, 20, 64}, rng);
    check_copy("two transposes", {x}, [](Network& n, const std::vector<Tensor*>& in) {
      return n.add_shuffle("", in[0], ShuffleParams{{1, 0, 2}, true, {20, 3, 128}, {2, 0, 1}});
    });
    HostTensor rows = movement_input(dt, {8, 40, 64}, rng);
    check_copy("aligned row slice", {rows}, [](Network& n, const std::vector<Tensor*>& in) {
      return n.add_slice("", in[0], SliceParams{{0, 3, 0}, {8, 30, 64}, {1, 1, 1}});
    });
    // The class token x[:, 0:1] of [B, 197, 768] and its concatenation back (output offsets of whole rows).
    HostTensor tokens = movement_input(dt, {4, 197, 96}, rng), cls = movement_input(dt, {4, 1, 96}, rng);
    check_copy("class token slice", {tokens}, [](Network& n, const std::vector<Tensor*>& in) {
      return n.add_slice("", in[0], SliceParams{{0, 0, 0}, {4, 1, 96}, {1, 1, 1}});
    });
    check_copy("class token concat", {cls, tokens}, [](Network& n, const std::vector<Tensor*>& in) {
      return n.add_concat("", {in[0], in[1]}, 1);
    });
  }
}

TEST(EngineLayers, MovementMisalignedFallback) {
  KILN_REQUIRE_TEST_BACKEND();
  std::mt19937 rng(502);
  for (DType dt : kElementTypes) {
    // Inner rows of 5 elements: no vector width divides them.
    check_permute("odd inner dim", dt, {3, 50, 7, 5}, {0, 2, 1, 3}, rng);
    // A slice starting one element into each row: the base address is misaligned for every vector.
    HostTensor x = movement_input(dt, {8, 40, 64}, rng);
    check_copy("misaligned slice", {x}, [](Network& n, const std::vector<Tensor*>& in) {
      return n.add_slice("", in[0], SliceParams{{0, 0, 1}, {8, 40, 62}, {1, 1, 1}});
    });
    check_copy("negative stride slice", {x}, [](Network& n, const std::vector<Tensor*>& in) {
      return n.add_slice("", in[0], SliceParams{{7, 2, 63}, {8, 19, 64}, {-1, 2, -1}});
    });
    // Concatenation along the last dim at offsets 3 and 9: misaligned output rows.
    HostTensor a = movement_input(dt, {40, 5, 3}, rng), b = movement_input(dt, {40, 5, 6}, rng),
               c = movement_input(dt, {40, 5, 16}, rng);
    check_copy("concat last dim", {a, b, c}, [](Network& n, const std::vector<Tensor*>& in) {
      return n.add_concat("", {in[0], in[1], in[2]}, 2);
    });
  }
}

TEST(EngineLayers, MovementTiledTranspose) {
  KILN_REQUIRE_TEST_BACKEND();
  std::mt19937 rng(503);
  for (DType dt : kElementTypes) {
    // [B, C, HW] -> [B, HW, C] with sizes that leave partial tiles on both sides.
    check_permute("batched transpose", dt, {3, 70, 45}, {0, 2, 1}, rng);
    check_permute("patch embedding transpose", dt, {2, 100, 197}, {0, 2, 1}, rng);
    check_permute("2-D transpose", dt, {129, 65}, {1, 0}, rng);
    check_permute("exact tiles", dt, {64, 96}, {1, 0}, rng);
    // Rank 6 with four batch dims around the two tiled ones.
    check_permute("rank 6 tiled", dt, {2, 3, 4, 20, 3, 18}, {0, 5, 2, 1, 4, 3}, rng);
    // Thin transposes stay elementwise: NCHW -> NHWC with 3 channels, and a tiled dim of 8.
    check_permute("nchw to nhwc, 3 channels", dt, {2, 3, 17, 19}, {0, 2, 3, 1}, rng);
    check_permute("thin transpose", dt, {5, 8, 300}, {0, 2, 1}, rng);
    // Inner pairs contiguous on both sides around a transpose.
    check_permute("transpose of pairs", dt, {40, 33, 2}, {1, 0, 2}, rng);
  }
}

TEST(EngineLayers, MovementRanks1To6) {
  KILN_REQUIRE_TEST_BACKEND();
  std::mt19937 rng(504);
  for (DType dt : kElementTypes) {
    HostTensor v = movement_input(dt, {5000}, rng);
    check_copy("rank 1 strided slice", {v}, [](Network& n, const std::vector<Tensor*>& in) {
      return n.add_slice("", in[0], SliceParams{{3}, {2000}, {2}});
    });
    check_permute("rank 2", dt, {300, 7}, {1, 0}, rng);
    check_permute("rank 3", dt, {9, 31, 40}, {2, 0, 1}, rng);
    check_permute("rank 4", dt, {3, 17, 5, 41}, {3, 1, 0, 2}, rng);
    check_permute("rank 5", dt, {2, 7, 3, 11, 13}, {4, 2, 0, 3, 1}, rng);
    check_permute("rank 6", dt, {2, 3, 5, 1, 7, 11}, {5, 3, 1, 4, 0, 2}, rng);
    check_permute("rank 6, inner dim kept", dt, {3, 2, 5, 2, 7, 24}, {3, 0, 4, 2, 1, 5}, rng);
  }
}

TEST(EngineLayers, MovementGatherAndPadding) {
  KILN_REQUIRE_TEST_BACKEND();
  std::mt19937 rng(505);
  for (DType dt : kElementTypes) {
    // Rows of 24 elements move as vectors; rows of 7 cannot. Negative indices wrap; Int32 indices too.
    HostTensor x = movement_input(dt, {5, 40, 24}, rng), odd = movement_input(dt, {5, 40, 7}, rng);
    HostTensor idx = HostTensor::from_int64s({3, -1, 0, 39, -40, 17, 17}, {7});
    for (const HostTensor& data : {x, odd}) {
      for (DType it : {DType::Int64, DType::Int32}) {
        check_copy("gather axis 1", {data, idx.to(it)}, [](Network& n, const std::vector<Tensor*>& in) {
          return n.add_gather("", in[0], in[1], GatherParams{GatherParams::Default, 1});
        });
      }
    }
    // One of the q, k, v of a [3, B, H, S, D] tensor.
    HostTensor qkv = movement_input(dt, {3, 4, 6, 37, 64}, rng);
    check_copy("gather axis 0", {qkv, HostTensor::from_int64s({2}, {1})},
               [](Network& n, const std::vector<Tensor*>& in) {
                 return n.add_gather("", in[0], in[1], GatherParams{GatherParams::Default, 0});
               });
    HostTensor data = movement_input(dt, {6, 50, 33}, rng);
    HostTensor eidx = random_tensor(DType::Int64, {6, 20, 33}, rng, -50, 50);
    check_copy("gather elements", {data, eidx}, [](Network& n, const std::vector<Tensor*>& in) {
      return n.add_gather("", in[0], in[1], GatherParams{GatherParams::Elements, 1});
    });
    HostTensor img = movement_input(dt, {3, 40, 50}, rng);
    for (auto mode : {PaddingParams::Constant, PaddingParams::Reflect, PaddingParams::Replicate,
                      PaddingParams::Circular}) {
      PaddingParams p{mode, {0, 3, 2}, {1, 5, 7}, 1.0};
      check_copy("padding", {img},
                 [&](Network& n, const std::vector<Tensor*>& in) { return n.add_padding("", in[0], p); });
    }
  }
}

}  // namespace
}  // namespace kiln::engine
