// Tests of phase timing (autograd/profile.h): nested scopes split their time without
// overlap, recorded ops carry their phase into backward, and profiling off records
// nothing. Times are only bounded from below (a busy wait lasts at least its length)
// and compared with each other, never with a speed.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>

#include "autograd/ops.h"
#include "autograd/profile.h"
#include "nn/gpt.h"
#include "tests/nn/model_fixtures.h"

using namespace nl;

namespace {

using Clock = std::chrono::steady_clock;

void busy_wait(double seconds) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
  }
}

std::map<std::string, double> totals_map() {
  std::map<std::string, double> m;
  for (const auto& [phase, s] : profile::totals()) m[phase] = s;
  return m;
}

// Leaves profiling off and the totals empty for the next test.
struct ProfilingOn {
  ProfilingOn() {
    profile::reset();
    profile::enable(true);
  }
  ~ProfilingOn() {
    profile::enable(false);
    profile::reset();
  }
};

}  // namespace

TEST_CASE("profile: a nested scope's time is charged to it alone, and the two add up to the outer span", "[profile]") {
  ProfilingOn on;
  const auto t0 = Clock::now();
  {
    profile::Scope outer("outer");
    busy_wait(0.002);
    {
      profile::Scope inner("inner");
      busy_wait(0.004);
    }
    busy_wait(0.001);
  }
  const double span = std::chrono::duration<double>(Clock::now() - t0).count();
  const auto t = totals_map();
  REQUIRE(t.size() == 2);
  CHECK(t.at("inner") >= 0.004);
  CHECK(t.at("outer") >= 0.003);  // 2 ms before and 1 ms after the inner scope
  CHECK(t.at("outer") + t.at("inner") <= span);
  CHECK(t.at("outer") + t.at("inner") >= span - 1e-3);  // only the clock reads outside the scopes
}

TEST_CASE("profile: ops recorded in a scope carry its phase, and backward charges their time to it", "[profile]") {
  Var x(Tensor::full({64, 64}, 0.5f), true);
  SECTION("on") {
    ProfilingOn on;
    Var y;
    {
      profile::Scope scope("square");
      y = ag::mul(x, x);
    }
    REQUIRE(y.node());
    CHECK(std::string(y.node()->phase) == "square");
    Var loss = ag::sum(y);  // recorded outside any scope
    CHECK(loss.node()->phase == nullptr);
    loss.backward();
    const auto t = totals_map();
    CHECK(t.count("square"));
    CHECK(t.count("square backward"));
    CHECK(t.count("unscoped backward"));
    CHECK(t.count("graph walk backward"));
    CHECK(t.count("leaf grad sum backward"));
  }
  SECTION("off: no phase on the nodes, no totals") {
    profile::reset();
    Var y;
    {
      profile::Scope scope("square");
      y = ag::mul(x, x);
    }
    CHECK(y.node()->phase == nullptr);
    ag::sum(y).backward();
    CHECK(profile::totals().empty());
  }
}

TEST_CASE("profile: a GPT training step is split into the phases bench_gpt prints", "[profile]") {
  Generator gen(3);
  GPT model(nl::test::gpt_config(32, 2, 16, 2, 8, "ln"), gen);
  const Tensor ids = Tensor::from_ints(std::vector<int32_t>(2 * 8, 3), {2, 8});
  ProfilingOn on;
  model.loss(ids, ids).backward();
  const auto t = totals_map();
  for (const char* phase : {"embedding", "norm", "attention", "attention core", "mlp", "lm head", "loss"}) {
    INFO(phase);
    CHECK(t.count(phase));
    CHECK(t.count(std::string(phase) + " backward"));
  }
  CHECK(!t.count("unscoped backward"));  // every recorded op of the model lies in a phase
  // a pre-LN block adds its residuals in the output projections' epilogues (nn/block.cpp);
  // a Peri-LN block, whose branches pass an output norm first, adds them in a phase of their own
  CHECK(!t.count("residual add"));
  GPT peri(nl::test::gpt_config(32, 2, 16, 2, 8, "ln", "peri"), gen);
  profile::reset();
  peri.loss(ids, ids).backward();
  CHECK(totals_map().count("residual add"));
}
