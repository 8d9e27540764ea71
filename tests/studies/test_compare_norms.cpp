// Tests of compare_norms (studies/compare/compare_norms.h, the study behind make demo):
// run specs as --runs reads them, the table's rows from a hand-made results.json (each
// run's block and recipe, its val loss against ln on the same block, its status), and
// the program on a tiny grid (the table, the report, --reuse) and on bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "studies/compare/compare_norms.h"
#include "studies/grid/run_spec.h"
#include "tests/needs.h"
#include "tests/studies/demo_doc.h"
#include "tests/studies/study_programs.h"
#include "tests/test_files.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

TEST_CASE("run specs: LABEL=FLAGS, a bare norm, a bare recipe; bad ones named", "[compare]") {
  const RunSpec a = parse_run_spec("bhyt-llama=--recipe bhyt-released  --norm bhyt");
  CHECK(a.label == "bhyt-llama");
  CHECK(a.args == std::vector<std::string>{"--recipe", "bhyt-released", "--norm", "bhyt"});
  CHECK(spec_text(a) == "bhyt-llama=--recipe bhyt-released --norm bhyt");
  const RunSpec n = parse_run_spec("cbwc");
  CHECK(n.label == "cbwc");
  CHECK(n.args == std::vector<std::string>{"--norm", "cbwc"});
  const RunSpec r = parse_run_spec("dyt-llm");
  CHECK(r.args == std::vector<std::string>{"--recipe", "dyt-llm"});
  CHECK(parse_run_spec("empty=").args.empty());
  CHECK_THROWS_WITH(parse_run_spec("nosuch"), Contains("run 'nosuch'") && Contains("ln, rms") &&
                                                  Contains("bhyt-released") && Contains("LABEL=FLAGS"));
  CHECK_THROWS_WITH(parse_run_spec("=--norm ln"), Contains("plain name"));
  CHECK_THROWS_WITH(parse_run_spec("a/b=--norm ln"), Contains("plain name"));
  CHECK_THROWS_WITH(parse_run_specs({"ln", "ln=--norm ln --lr 0.01"}), Contains("'ln' is given twice"));
  CHECK(parse_run_specs(default_demo_runs()).size() == 13);
}

TEST_CASE("run specs: a label is a safe folder name, never a study file's; the grid's own flags are refused",
          "[compare]") {
  // before: each was accepted (results.json trained every run, then failed writing the study's file)
  const std::vector<std::string> bads = {"results.json", "report.md", "summary.csv", "val_loss.csv", "a|b", "-x",
                                        "--help", "a\nb", "a,b", ".hidden", "x.tmp", std::string(300, 'a')};
  for (const std::string& bad : bads) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_run_spec(bad + "=--norm ln"), Contains("run '" + bad + "=--norm ln'"));
  }
  CHECK_THROWS_WITH(parse_run_spec(std::string(65, 'a') + "=--norm ln"), Contains("at most 64"));
  CHECK_THROWS_WITH(parse_run_spec("results.json=--norm ln"), Contains("ends in .json"));
  CHECK(parse_run_spec(std::string(64, 'a') + "=--norm ln").label.size() == 64);
  CHECK(parse_run_spec("dyt-a0.5+b_2=--norm dyt").label == "dyt-a0.5+b_2");
  // before: overridden by the grid without a word
  for (const std::string own : {"--threads 0", "--out x", "--overwrite", "--resume", "--quiet", "--threads=3"}) {
    INFO(own);
    CHECK_THROWS_WITH(parse_run_spec("x=--norm ln " + own), Contains("is the study's to set for every run"));
  }
}

namespace {

DemoResults results_of(const json& runs) { return comparison_results_of<DemoResults>(demo_doc(runs), "", "hand-made"); }

const DemoRow& row_of(const std::vector<DemoRow>& rows, const std::string& label) {
  for (const DemoRow& r : rows)
    if (r.label == label) return r;
  FAIL("no row " << label);
  return rows.front();
}

}  // namespace

TEST_CASE("demo rows: val loss against ln on the same block and recipe, else on the same block; the status "
          "against ln and the unigram loss",
          "[compare]") {
  // ln on pre at 2.4, ln on llama at 2.6; the unigram loss 3.3
  const json runs = json::array({
      demo_run("ln", "pre", "ln", "", 2.4),
      demo_run("rms", "pre", "rms", "", 2.412),             // 0.5 % above: ok
      demo_run("bhyt", "pre", "bhyt", "", 2.64),            // 10 % above ln on pre
      demo_run("dyt", "pre", "dyt", "", 3.25),              // closed (3.3 - 3.25) / 0.9 < 1/10 of the gap: stuck
      demo_run("dyt-verma", "pre", "dyt", "dyt-verma", 3.1),  // 0.2 / 0.9 of the gap: behind, not stuck
      demo_run("ln-llama", "llama", "ln", "", 2.6),
      demo_run("bhyt-released", "llama", "bhyt", "bhyt-released", 2.47),  // 5 % below ln on llama (not on pre)
      demo_run("dyt-llm", "llama", "dyt", "dyt-llm", NAN, 1, true),
      demo_run("gone", "llama", "rms", "", 2.5, 137),
      demo_run("refused", "pre", "rms", "", NAN, 2),
      demo_run("alone", "peri", "rms", "", 2.5),            // no ln on peri
      demo_run("ln-verma", "pre", "ln", "dyt-verma", 2.5),  // dyt-verma's own ln, after dyt-verma in the list
  });
  const DemoResults results = results_of(runs);
  const std::vector<DemoRow> rows = demo_rows(results);
  REQUIRE(rows.size() == 12);
  CHECK(row_of(rows, "ln").vs_ln == Approx(0.0));
  CHECK(row_of(rows, "ln").status == "ok");
  CHECK(row_of(rows, "rms").vs_ln == Approx(0.5));
  CHECK(row_of(rows, "rms").status == "ok");
  CHECK(row_of(rows, "bhyt").vs_ln == Approx(10.0));
  CHECK(row_of(rows, "bhyt").status == "behind ln by 10.0 %");
  CHECK(row_of(rows, "dyt").status == "stuck near unigram loss");
  // dyt-verma against ln under its own recipe (2.5), not the plain ln (2.4)
  CHECK(row_of(rows, "dyt-verma").ln_label == "ln-verma");
  CHECK(row_of(rows, "dyt-verma").vs_ln == Approx(24.0));
  CHECK(row_of(rows, "dyt-verma").status == "behind ln by 24.0 %");
  CHECK(row_of(rows, "ln-verma").ln_label == "ln-verma");
  CHECK(row_of(rows, "dyt").ln_label == "ln");
  CHECK(row_of(rows, "bhyt-released").ln_label == "ln-llama");  // no ln under bhyt-released: ln on its block
  CHECK(row_of(rows, "alone").ln_label.empty());
  CHECK(row_of(rows, "bhyt-released").vs_ln == Approx(100.0 * (2.47 - 2.6) / 2.6));
  CHECK(row_of(rows, "bhyt-released").status == "ok");
  CHECK(row_of(rows, "bhyt-released").recipe == "bhyt-released");
  CHECK(row_of(rows, "bhyt-released").block == "llama");
  CHECK(row_of(rows, "ln-llama").recipe == "-");
  CHECK(row_of(rows, "dyt-llm").status == "DIVERGED (NaN/inf)");
  // before: a killed or refused run read DIVERGED (NaN/inf) and the study exited 0
  CHECK(row_of(rows, "gone").status == "FAILED (exit 137)");
  CHECK(row_of(rows, "refused").status == "FAILED (exit 2)");
  CHECK(std::isnan(row_of(rows, "alone").vs_ln));
  CHECK(row_of(rows, "alone").status == "ok");  // below the fixed threshold, no ln to read it against
  CHECK(row_of(rows, "ln").rms_ratio == Approx(3.0));

  const std::string md = render_demo_report(results);
  CHECK_THAT(md, Contains("| bhyt-released | bhyt-released | llama | bhyt | 2.4700 | -5.0 % | ln-llama | 2.5700 |") &&
                     Contains("| bhyt | - | pre | bhyt | 2.6400 | +10.0 % | ln |") &&
                     Contains("| ln | - | pre | ln | 2.4000 | 0.0 % | ln |") &&
                     Contains("| alone | - | peri | rms | 2.5000 | - | - |") &&
                     Contains("behind ln by 10.0 %") && Contains("- `ln-llama`: `--norm ln`") && Contains("3.3000"));
  CHECK(md.find("{{") == std::string::npos);
  CHECK(md.find("folds into") == std::string::npos);  // no cbwc run
  // ln and cbwc on the same block and recipe: the fold paragraph
  json with_cbwc = runs;
  with_cbwc.push_back(demo_run("cbwc", "pre", "cbwc", "", 2.4000001));
  CHECK_THAT(render_demo_report(results_of(with_cbwc)),
             Contains("**cbwc against ln**") && Contains("6 decimals (2.400000 and 2.400000)"));
}

namespace {

const std::string kTinyCompareFlags =
    "--layers 2 --dim 16 --heads 2 --seq 8 --batch 2 --steps 4 --warmup 1 --eval-every 2 --eval-batches 1 "
    "--jobs 2";

}  // namespace

TEST_CASE("compare_norms: bad run specs are refused in one line, exit 2, before any file", "[compare][cli]") {
  TempDir tmp;
  const std::string out = tmp.sub("out");
  expect_each_refused(kCompareNorms, kTinyCompareFlags, out,
                      {{"--runs nosuch", "run 'nosuch'"},
                       {"--runs 'x=--norm nope'", "nope"},
                       {"--runs 'x=--bogus 1'", "unknown flag '--bogus'"},
                       {"--runs 'ln,ln=--norm rms'", "given twice"},
                       {"--runs '../x=--norm ln'", "plain name"},
                       {"--runs 'x=--recipe nope'", "unknown recipe 'nope'"},
                       {"--runs 'results.json=--norm ln'", "ends in .json"},
                       {"--runs 'x=--norm ln --threads 0'", "--threads is the study's"}},
                      tmp);
}

TEST_CASE("compare_norms --dry-run: the runs priced, nothing trained", "[compare][cli]") {
  TempDir tmp;
  const std::string out = tmp.sub("dry");
  const RunResult r =
      run_program(kCompareNorms, kTinyCompareFlags + " --out " + out + " --runs ln,rms --dry-run --step-ms 1000", tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 0);
  // 2 runs of 4 steps at 1 s, 2 at a time: 4 s on two cores (8 s on one)
  CHECK_THAT(r.out, Contains("compare_norms: 2 runs in " + out + ", 0 finished already (kept); about 0.1 minutes"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("compare_norms: runs of norms, recipes and flags on two blocks; the table, summary, report, --reuse",
          "[compare][cli][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string out = tmp.sub("demo");
  const std::string runs = " --runs 'ln,rms,bhyt-released,ln-llama=--block llama --norm ln,fast=--norm rms --lr 0.003'";
  const RunResult r = run_program(kCompareNorms, kTinyCompareFlags + " --out " + out + runs, tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
  const auto summary = read_csv_rows(out + "/summary.csv");
  REQUIRE(summary.size() == 6);
  CHECK(summary[0] == std::vector<std::string>{"run", "recipe", "block", "norm", "train_loss", "val_loss",
                                               "val_vs_ln_percent", "ln_run", "tok_per_s", "rms_last_over_first",
                                               "status"});
  CHECK((summary[1][0] == "ln" && summary[1][1] == "-" && summary[1][2] == "pre" && summary[1][6] == "0"));
  CHECK((summary[3][0] == "bhyt-released" && summary[3][1] == "bhyt-released" && summary[3][2] == "llama" &&
         summary[3][3] == "bhyt"));
  CHECK((summary[4][0] == "ln-llama" && summary[4][2] == "llama" && summary[4][6] == "0"));
  CHECK((summary[3][7] == "ln-llama" && summary[1][7] == "ln" && summary[2][7] == "ln"));
  // bhyt-released against ln-llama, the ln on its block
  const double bhyt = std::stod(summary[3][5]), ln_llama = std::stod(summary[4][5]);
  CHECK(std::stod(summary[3][6]) == Approx(100.0 * (bhyt - ln_llama) / ln_llama).epsilon(1e-5));
  // every run's config.json records what its flags made: the recipe's expansion, the run's own flags over the common
  // ones
  const json released = json::parse(read_bytes(out + "/bhyt-released/config.json"));
  CHECK(released["recipe"] == "bhyt-released");
  CHECK(released["block"] == "llama");
  CHECK(released["steps"] == 4);
  CHECK(json::parse(read_bytes(out + "/fast/config.json"))["lr"] == 0.003);
  CHECK(json::parse(read_bytes(out + "/ln-llama/config.json"))["mlp"] == "swiglu");
  CHECK(read_csv_rows(out + "/val_loss.csv")[0] ==
        std::vector<std::string>{"step", "ln", "rms", "bhyt-released", "ln-llama", "fast"});
  // the plot's panels: one per ln run, each with the runs read against it
  CHECK(read_bytes(out + "/val_loss_panels.tsv") ==
        "val_loss_panel1.csv\tln, rms, fast\nval_loss_panel2.csv\tbhyt-released, ln-llama\n");
  CHECK(read_csv_rows(out + "/val_loss_panel2.csv")[0] ==
        std::vector<std::string>{"step", "bhyt-released", "ln-llama"});
  const std::string md = read_bytes(out + "/report.md");
  CHECK_THAT(md, Contains("| bhyt-released | bhyt-released | llama | bhyt |") &&
                     Contains("- `fast`: `--norm rms --lr 0.003`"));
  CHECK_THAT(r.out, Contains("bhyt-released  bhyt-released  llama"));
  // --reuse renders the same report from results.json alone
  fs::remove(out + "/report.md");
  fs::remove_all(out + "/ln");
  const RunResult again = run_program(kCompareNorms, kTinyCompareFlags + " --out " + out + runs + " --reuse", tmp);
  INFO("stderr: " << again.err);
  REQUIRE(again.code == 0);
  CHECK(read_bytes(out + "/report.md") == md);
}
