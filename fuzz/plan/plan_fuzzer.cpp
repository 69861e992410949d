// libFuzzer target: the engine plan loader (engine::Plan::deserialize, CPU backend) on arbitrary payloads.
// The input is the payload only: the target frames it (magic, version, size) and appends its SHA-256, so
// mutations reach the field validation instead of stopping at the checksum (a re-signed plan, as an attacker
// with write access to a cache or a .kiln would make). A plan it accepts serializes to bytes that load again
// and serialize the same.

#include <cstring>

#include "common/fuzz_check.h"
#include "kiln/engine/plan.h"
#include "kiln/support/hash.h"

namespace {

std::vector<uint8_t> framed(const uint8_t* payload, size_t size) {
  std::vector<uint8_t> out = {'K', 'I', 'L', 'N', 'P', 'L', 'A', 'N'};
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(kiln::engine::kPlanFormatVersion >> (8 * i)));
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(size) >> (8 * i)));
  out.insert(out.end(), payload, payload + size);
  kiln::Sha256 sha;
  sha.update(payload, size);
  std::vector<uint8_t> digest = sha.digest();
  out.insert(out.end(), digest.begin(), digest.end());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kiln::engine::BackendOptions options{.threads = 1};
  std::shared_ptr<kiln::engine::Plan> plan;
  if (!kiln::fuzz::accepts([&] { plan = kiln::engine::Plan::deserialize(framed(data, size), options); }))
    return 0;
  kiln::fuzz::accepts([&] { plan->layers(); });
  kiln::fuzz::invariant("a loaded plan serializes to bytes that load and serialize the same", [&] {
    const std::vector<uint8_t> once = plan->serialize();
    return kiln::engine::Plan::deserialize(once, options)->serialize() == once;
  });
  return 0;
}
