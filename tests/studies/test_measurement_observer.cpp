// Tests of train_gpt's --measure-at (studies/instruments/measurement_observer.h): the
// records land at the asked steps, on the same held-out batches whatever the run's
// seed, and a stopped and resumed run writes the file a straight run writes.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "studies/instruments/measurement_observer.h"
#include "tensor/threads.h"
#include "tests/needs.h"
#include "tests/test_files.h"

using namespace nl;
using namespace nl::test;
namespace fs = std::filesystem;

namespace {

GPTRunConfig tiny_dyt(const std::string& dir) {
  GPTRunConfig c;
  c.model.layers = 2, c.model.dim = 16, c.model.heads = 2, c.model.context = 8;
  c.model.norm.name = "dyt";
  c.batch = 4, c.steps = 8, c.warmup = 2, c.eval_every = 4, c.eval_batches = 1, c.eval_batch_size = 4;
  c.sample_bytes = 0, c.threads = 1, c.quiet = true, c.out_dir = dir;
  return c;
}

struct KeepThreads {
  int n = num_threads();
  ~KeepThreads() { set_num_threads(n); }
};

}  // namespace

TEST_CASE("measure-at: records at the asked steps; a resumed run continues the file exactly",
          "[measure][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  KeepThreads keep;
  TempDir tmp;
  const MeasureAtSettings at{{3, 8}, 1};
  run_gpt(tiny_dyt(tmp.sub("A")), measurement_observer(at));
  const auto a = nlohmann::json::parse(read_bytes(tmp.sub("A") + "/measurements.json"));
  REQUIRE(a.size() == 2);
  REQUIRE(a.contains("3"));
  REQUIRE(a.contains("8"));
  // a DyT model: every block's two sites and the final norm are bounded
  CHECK(a["8"]["summary"]["tanh_sites"] == 5);
  CHECK(a["8"]["layers"].size() == 3);

  GPTRunConfig first = tiny_dyt(tmp.sub("B"));
  first.stop_after = 5;
  run_gpt(first, measurement_observer(at));
  CHECK(nlohmann::json::parse(read_bytes(tmp.sub("B") + "/measurements.json")).size() == 1);
  GPTRunConfig second = tiny_dyt(tmp.sub("B"));
  second.resume = true;
  run_gpt(second, measurement_observer(at));
  CHECK(read_bytes(tmp.sub("B") + "/measurements.json") == read_bytes(tmp.sub("A") + "/measurements.json"));

  // another seed trains another model, measured on the same batches
  GPTRunConfig other = tiny_dyt(tmp.sub("C"));
  other.seed = 7;
  run_gpt(other, measurement_observer(at));
  const auto c = nlohmann::json::parse(read_bytes(tmp.sub("C") + "/measurements.json"));
  CHECK(c["8"]["settings"] == a["8"]["settings"]);
  CHECK(c["8"]["summary"] != a["8"]["summary"]);
}
