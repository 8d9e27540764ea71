// Tests of the regime study's records (studies/regime/regime_records.h): every committed
// results file loads and its page regenerates byte for byte from it; a renamed or
// missing key is refused naming the key and the file (by the reader, and by
// regime_study --reuse as one line, exit 2), never a "-" in a report; each record
// survives a round trip through its JSON.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "studies/regime/regime_records.h"
#include "studies/regime/regime_report.h"
#include "tests/studies/results_doc.h"
#include "tests/test_files.h"

namespace fs = std::filesystem;
using namespace nl;
using namespace nl::test;
using Catch::Contains;

namespace {

const std::string kRegime = "regime_diff100k";  // GPT cells only, every one finished
const std::string kCommitted = committed_path(kRegime);

}  // namespace

TEST_CASE("regime records: every committed results file loads and regenerates its page byte for byte",
          "[regime][docs]") {
  int pages = 0;
  for (const auto& e : fs::directory_iterator("docs/results")) {
    const fs::path path = e.path();
    if (path.extension() != ".json" || path.filename().string().rfind("regime", 0) != 0) continue;
    INFO(path.string());
    const std::string text = read_bytes(path.string());
    const RegimeResults results = regime_results_of(json::parse(text), "--reuse", path.string());
    // the file regime_study writes beside the page, from the record: the same bytes
    CHECK(json(results).dump(1) + "\n" == text);
    const fs::path page = fs::path(path).replace_extension(".md");
    REQUIRE(fs::exists(page));
    CHECK(render_regime_report(results, true, path.stem().string()) == read_bytes(page.string()));
    ++pages;
  }
  CHECK(pages >= 20);
}

TEST_CASE("regime records: a renamed or missing key is refused naming it and the file", "[regime][results]") {
  // the end's validation loss, which every table of the report reads
  CHECK_THROWS_WITH(regime_results_of(renamed(committed(kRegime), "/runs/3/val_end", "val_last"), "--reuse",
                                      kCommitted),
                    "--reuse: " + kCommitted + ": runs[3].val_end is missing");
  // an instrument of the end of a finished GPT cell (the report's instruments table)
  CHECK_THROWS_WITH(regime_results_of(renamed(committed(kRegime), "/runs/0/erank_end", "erank_last"), "--pages",
                                      kCommitted),
                    "--pages: " + kCommitted + ": runs[0].erank_end is missing");
  json no_dim = committed(kRegime);
  no_dim["recipe"].erase("dim");
  CHECK_THROWS_WITH(regime_results_of(no_dim, "--cells-from", kCommitted),
                    "--cells-from: " + kCommitted + ": recipe.dim is missing");
  CHECK_THROWS_WITH(regime_results_of(renamed(committed(kRegime), "/reference", "ref"), "--reuse", kCommitted),
                    Contains(": reference is missing"));
  json retyped = committed(kRegime);
  retyped["runs"][2]["curve"][1][1] = "3.5";
  CHECK_THROWS_WITH(regime_results_of(retyped, "--reuse", kCommitted),
                    Contains("runs[2].curve[1][1] is a string, not a number or null"));
  retyped = committed(kRegime);
  retyped["runs"][1]["noise_end"]["0.1"] = true;
  CHECK_THROWS_WITH(regime_results_of(retyped, "--reuse", kCommitted),
                    Contains("runs[1].noise_end.0.1 is true or false, not a number or null"));
  // a failed cell's record may lack the end's instruments (it was not measured there)
  json failed = committed(kRegime);
  failed["runs"][0]["exit_code"] = 1;
  failed["runs"][0].erase("erank_end");
  CHECK_NOTHROW(regime_results_of(failed, "--reuse", kCommitted));
}

TEST_CASE("regime_study --reuse: a renamed instrument is one line naming it, exit 2, not a \"-\" in the page",
          "[regime][results][cli]") {
  TempDir tmp;
  fs::create_directories(tmp.sub("runs"));
  const std::string file = tmp.sub("runs") + "/results.json";
  write_bytes(file, renamed(committed(kRegime), "/runs/0/erank_end", "erank_last").dump(1));
  const RunResult r = run_program(::nl::test::build_dir() + "/regime_study",
                                  "--reuse --out " + tmp.sub("runs") + " --doc " + tmp.sub("r.md"), tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(count_lines(r.err) == 1);
  CHECK_THAT(r.err, Contains("--reuse: " + file + ": runs[0].erank_end is missing"));
  CHECK_FALSE(fs::exists(tmp.sub("r.md")));
}

TEST_CASE("regime records: each record survives a round trip through its JSON", "[regime]") {
  RegimeRun gpt;
  gpt.model = "gpt", gpt.arm = "dyt-a2", gpt.size = 30000, gpt.width = 64, gpt.seed = 1338, gpt.llama = true;
  gpt.exit_code = 0, gpt.kept = true, gpt.norm = "dyt", gpt.bounded = "tanh", gpt.val_end = 2.5, gpt.seconds = 10.25;
  gpt.curve = {{250, 3.5}, {500, NAN}};
  gpt.train_end = 1.75, gpt.sat_screen = 0.5, gpt.sat_end = NAN, gpt.erank_end = 99.5;
  gpt.logit_variance_end = 14.25, gpt.alpha_end = 0.625, gpt.noise_end = std::map<std::string, double>{{"0.1", 46.5}};
  const json j = gpt;
  CHECK(j["curve"] == json::parse("[[250, 3.5], [500, null]]"));  // NaN is written as null
  CHECK(j["sat_end"].is_null());
  const RegimeRun back = j.get<RegimeRun>();
  CHECK(json(back) == j);
  CHECK(back.arm == "dyt-a2");
  CHECK(back.width == 64);
  CHECK(back.llama);
  CHECK(std::isnan(back.curve[1].value));
  CHECK(std::isnan(*back.sat_end));
  CHECK(back.noise_end->at("0.1") == 46.5);

  RegimeRun vit;
  vit.model = "vit", vit.arm = "ln", vit.size = -1, vit.exit_code = 1, vit.norm = "ln";
  vit.acc_curve = Curve{{250, 0.75}};
  const json v = vit;
  CHECK_FALSE(v.contains("sat_screen"));  // the GPT instruments are a GPT cell's
  CHECK(v["val_end"].is_null());
  const RegimeRun vit_back = v.get<RegimeRun>();
  CHECK(json(vit_back) == v);
  CHECK_FALSE(vit_back.finished());
  CHECK(vit_back.acc_curve->at(0).value == 0.75);

  // the whole file, its header and lists included: every committed file's record writes it back unchanged
  // (the test above); one built here reads back to the same fields
  RegimeResults r = regime_results_of(committed(kRegime), "", kCommitted);
  r.header.date = "2026-01-02", r.header.jobs = 3, r.grid_replaced = !r.grid_replaced, r.llama_note = "a note";
  r.not_run = std::vector<NotRunCell>{{"gpt w128 30K ln", 1339}};
  r.llama_arms = {{"llama-x", "--block llama"}};
  r.unigram_loss.reset();
  const json rj = r;
  CHECK_FALSE(rj.contains("unigram_loss"));  // absent stays absent (--reuse computes it)
  const RegimeResults rb = regime_results_of(rj, "", "built");
  CHECK(json(rb) == rj);
  CHECK(rb.header.date == "2026-01-02");
  CHECK(rb.header.jobs == 3);
  CHECK(rb.not_run->at(0).seed == 1339);
  CHECK(rb.llama_arms.at(0).flags == "--block llama");
  CHECK(rb.dim == r.dim);
  CHECK(rb.runs.size() == r.runs.size());
}

TEST_CASE("regime report: a ViT claim that cannot be judged is listed among the untestable ones", "[regime]") {
  // regime_vit.json with the DyT arm's seed 1339 on all images dropped: two paired seeds,
  // fewer than kMinSeeds, so its claim is untestable and the page must say so in its list
  // (the list was once filled in before the ViT section added to it)
  json doc = committed("regime_vit");
  json& runs = doc["runs"];
  const size_t before = runs.size();
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i]["model"] == "vit" && runs[i]["arm"] == "dyt-a0.5" && runs[i]["size"] == -1 && runs[i]["seed"] == 1339)
      runs.erase(i--);
  REQUIRE(runs.size() == before - 1);
  const std::string page = render_regime_report(regime_results_of(doc, "", "made up"), false);
  const size_t list = page.find("Could not be tested here:");
  REQUIRE(list != std::string::npos);
  CHECK_THAT(page.substr(list, page.find("\n\n", list) - list),
             Contains("ViT dyt-a0.5 against ln on all images, best validation accuracy: 2 paired seed(s)"));
}
