// The report templates' renderer (studies/report/template.h) on its own: each construct
// of its mustache subset against text written out by hand, and the error for a name the
// values do not hold.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "studies/report/template.h"
#include "tensor/error.h"

using namespace nl;
using Catch::Contains;
using nlohmann::json;

TEST_CASE("template: values, dotted paths, numbers in their shortest form", "[report]") {
  const json v = {
      {"name", "ln"}, {"loss", 2.5}, {"steps", 500}, {"run", {{"seed", 1337}, {"norm", {{"kind", "rms"}}}}}};
  CHECK(render_template("{{name}}: {{loss}} after {{steps}} steps", v, "t") == "ln: 2.5 after 500 steps");
  CHECK(render_template("seed {{run.seed}}, {{run.norm.kind}}", v, "t") == "seed 1337, rms");
  CHECK(render_template("no places at all\n", v, "t") == "no places at all\n");
}

TEST_CASE("template: sections over arrays, truthy values, inverted sections, comments", "[report]") {
  const json v = {{"rows", json::array({{{"a", 1}}, {{"a", 2}}, {{"a", 3}}})},
                  {"names", json::array({"x", "y"})},
                  {"empty", json::array()},
                  {"yes", true},
                  {"no", false},
                  {"zero", 0},
                  {"blank", ""},
                  {"title", "T"}};
  CHECK(render_template("{{#rows}}[{{a}}]{{/rows}}", v, "t") == "[1][2][3]");
  CHECK(render_template("{{#names}}<{{.}}>{{/names}}", v, "t") == "<x><y>");
  // inside a section the element is looked up first, then the enclosing values
  CHECK(render_template("{{#rows}}{{title}}{{a}} {{/rows}}", v, "t") == "T1 T2 T3 ");
  CHECK(render_template("{{#yes}}shown{{/yes}}{{#no}}hidden{{/no}}", v, "t") == "shown");
  CHECK(render_template("{{#empty}}x{{/empty}}{{#zero}}x{{/zero}}{{#blank}}x{{/blank}}", v, "t").empty());
  CHECK(render_template("{{^no}}a{{/no}}{{^empty}}b{{/empty}}{{^yes}}c{{/yes}}", v, "t") == "ab");
  CHECK(render_template("x{{! a note for the template's reader }}y", v, "t") == "xy");
}

TEST_CASE("template: a name the values do not hold is an error naming it, the template and the line", "[report]") {
  const json v = {{"a", 1}};
  CHECK_THROWS_AS(render_template("{{a}}\n{{missing}}", v, "report.md.in"), Error);
  CHECK_THROWS_WITH(render_template("{{a}}\n{{missing}}", v, "report.md.in"),
                    Contains("missing") && Contains("report.md.in") && Contains("2"));
  CHECK_THROWS_WITH(render_template("{{#a}}{{b.c}}{{/a}}", v, "t"), Contains("b.c"));
}
