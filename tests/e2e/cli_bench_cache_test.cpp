// kiln bench without an .npz (random inputs from the program's shapes, --shape for dynamic dims, several
// thread counts in one run, the statistics in JSON) and kiln cache list|clear, as a user types them. No speed
// is checked: only that the figures exist and are ordered as order statistics must be.

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using namespace kiln::cli_test;  // NOLINT(google-build-using-namespace)

void expect_ordered(const nlohmann::json& s, const std::string& what) {
  EXPECT_GT(s.at("min").get<double>(), 0.0) << what;
  EXPECT_LE(s.at("min").get<double>(), s.at("median").get<double>()) << what;
  EXPECT_LE(s.at("median").get<double>(), s.at("p90").get<double>()) << what;
  EXPECT_LE(s.at("p90").get<double>(), s.at("p99").get<double>()) << what;
  EXPECT_LE(s.at("min").get<double>(), s.at("mean").get<double>()) << what;
  EXPECT_GE(s.at("spread").get<double>(), 0.0) << what;
}

TEST(CliBench, RandomInputsWithShapeAndSeveralThreadCounts) {
  // tiny_encoder's input has dynamic batch and sequence dims: --shape binds them.
  Result r = kiln("bench " + data("tiny_encoder/model.pt2") +
                  " --shape src=3x7x64 --iters 5 --warmup 1 --threads 1,2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("runs").size(), 2u);
  EXPECT_EQ(j["runs"][0]["threads"], 1);
  EXPECT_EQ(j["runs"][1]["threads"], 2);
  for (const auto& run : j["runs"]) {
    expect_ordered(run.at("kiln"), "kiln");
    expect_ordered(run.at("reference"), "reference");
    EXPECT_GT(run.at("speedup").get<double>(), 0.0);
  }
  EXPECT_EQ(j.at("random_inputs"), nlohmann::json::array({"src=3x7x64"}));
  EXPECT_EQ(j.at("kiln_ms_median"), j["runs"][0]["kiln"]["median"]);  // the keys of earlier versions stay
  EXPECT_TRUE(j.at("unreliable").is_array());
}

TEST(CliBench, RandomInputsTakeTheExportHintsAndPrintTheStatistics) {
  Result r = kiln("bench " + data("tiny_convnet/model.pt2") + " --iters 3 --warmup 1 --threads 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("random inputs"), std::string::npos) << r.out;
  for (const char* field : {"min ", "median ", "mean ", "p90 ", "p99 ", "spread "}) {
    EXPECT_NE(r.out.find(field), std::string::npos) << field << "\n" << r.out;
  }
}

TEST(CliBench, BadShapesAreOneLineErrors) {
  for (const std::string& flags :
       {std::string("--shape nope=1x2"), std::string("--shape src=3x7"), std::string("--shape src=3x7x65"),
        "--shape src=3x7x64 --inputs " + data("tiny_encoder/io_0.npz")}) {
    Result r = kiln("bench " + data("tiny_encoder/model.pt2") + " --iters 1 --warmup 0 " + flags);
    EXPECT_EQ(r.code, 2) << flags << "\n" << r.out;
    EXPECT_EQ(lines(r.err), 1u) << flags << "\n" << r.err;
  }
}

TEST(CliCache, ListShowsTimingChoicesAndClearRemovesThem) {
  const fs::path dir = fs::temp_directory_path() / ("kiln_cli_cache_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string timing = (dir / "timing.txt").string();
  const std::string engines = (dir / "engines").string();
  const std::string where = " --cache-dir " + engines + " --timing-cache " + timing;
  Result c = kiln("compile " + data("tiny_convnet/model.pt2") + " -o " + (dir / "m.kiln").string() + where);
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("tactic choices: 0 from the timing cache, "), std::string::npos) << c.out;
  EXPECT_NE(c.out.find(" reused within the build, "), std::string::npos) << c.out;

  Result list = kiln("cache list" + where);
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("engine cache " + engines), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("timing cache " + timing), std::string::npos) << list.out;
  // tiny_convnet's convolutions have two optimized candidates each: one timing-cache line per signature.
  EXPECT_NE(list.out.find("margin"), std::string::npos) << list.out;

  Result clear = kiln("cache clear" + where);
  ASSERT_EQ(clear.code, 0) << clear.err;
  EXPECT_FALSE(fs::exists(timing));
  Result after = kiln("cache list" + where);
  ASSERT_EQ(after.code, 0) << after.err;
  EXPECT_NE(after.out.find(": 0 engines"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find(": 0 choices"), std::string::npos) << after.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln
