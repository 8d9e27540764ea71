// Tests of train/io/json_fields.h's records named once: a made-up record's visit_fields
// drives both the writer and the reader, so the JSON it writes is checked against text
// written out here by hand, and every way a file can be wrong (a field missing, of
// another kind, null where a record belongs) is refused naming the field's whole path.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/io/json_fields.h"

using json = nlohmann::json;
using namespace nl;
using Catch::Contains;

namespace {

struct Point {
  std::string name;
  double x = 0;
};
template <class Io>
void visit_fields(Io& io, FieldsOf<Io, Point> p) {
  io("name", p.name)("x", p.x);
}
NL_JSON_RECORD(Point)

struct Header {
  std::string date;
};
template <class Io>
void visit_fields(Io& io, FieldsOf<Io, Header> h) {
  io("date", h.date);
}
NL_JSON_RECORD(Header)

struct Made {
  Header header;
  int64_t steps = 0;
  double loss = 0;
  bool kept = false;            // absent in older files: false
  std::optional<double> extra;  // written only when measured
  std::optional<Point> best;    // null: none
  std::vector<Point> points;
  std::map<std::string, double> noise;
  json recipe = json::object();
  std::optional<double> gpt_only;  // required when steps > 0
};
template <class Io>
void visit_fields(Io& io, FieldsOf<Io, Made> m) {
  io.flat(m.header)("steps", m.steps)("loss", m.loss);
  io.optional("kept", m.kept).optional("extra", m.extra).nullable("best", m.best);
  io("points", m.points)("noise", m.noise).object("recipe", m.recipe);
  io.optional("gpt_only", m.gpt_only, m.steps > 0);
}
NL_JSON_RECORD(Made)

Made made() {
  Made m;
  m.header.date = "2026-12-05";
  m.steps = 0;
  m.loss = NAN;
  m.kept = true;
  m.best = Point{"b", 0.5};
  m.points = {{"p", 1.5}, {"q", NAN}};
  m.noise = {{"0.1", 2.0}};
  m.recipe = {{"dim", 64}};
  return m;
}

// The text of made()'s JSON as nlohmann dumps it (keys sorted, NaN as null).
const char* const kMadeText =
    R"({"best":{"name":"b","x":0.5},"date":"2026-12-05","kept":true,"loss":null,"noise":{"0.1":2.0},)"
    R"("points":[{"name":"p","x":1.5},{"name":"q","x":null}],"recipe":{"dim":64},"steps":0})";

// The one-line error read_record gives for doc.
std::string refusal(const json& doc) {
  try {
    read_record<Made>(doc, "--reuse", "x.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("json fields: the writer writes each field visit_fields names, a NaN as null", "[json_fields]") {
  const json j = made();
  CHECK(j.dump() == kMadeText);
  CHECK(j["loss"].is_null());  // null, not a NaN that only dump() turns into null
  CHECK(j["points"][1]["x"].is_null());
}

TEST_CASE("json fields: the reader reads back what the writer wrote, null as NaN", "[json_fields]") {
  const Made back = read_record<Made>(json::parse(kMadeText), "--reuse", "x.json");
  CHECK(back.header.date == "2026-12-05");
  CHECK(back.kept);
  CHECK(std::isnan(back.loss));
  REQUIRE(back.best);
  CHECK(back.best->name == "b");
  CHECK(back.best->x == 0.5);
  REQUIRE(back.points.size() == 2);
  CHECK(back.points[0].x == 1.5);
  CHECK(std::isnan(back.points[1].x));
  CHECK(back.noise.at("0.1") == 2.0);
  CHECK(back.recipe["dim"] == 64);
  CHECK(json(back).dump() == kMadeText);
}

TEST_CASE("json fields: an optional field absent stays absent, one present is written and read", "[json_fields]") {
  json j = json::parse(kMadeText);
  j.erase("kept");
  const Made back = read_record<Made>(j, "", "x.json");
  CHECK_FALSE(back.kept);  // its default
  CHECK_FALSE(back.extra);
  CHECK_FALSE(json(back).contains("extra"));  // an empty std::optional is not written, not even as null

  Made measured = made();
  measured.extra = NAN;
  const json written = measured;
  REQUIRE(written.contains("extra"));
  CHECK(written["extra"].is_null());
  const Made again = read_record<Made>(written, "", "x.json");
  REQUIRE(again.extra);  // present, and not finite
  CHECK(std::isnan(*again.extra));
}

TEST_CASE("json fields: a nullable field is null for none and must be there", "[json_fields]") {
  Made none = made();
  none.best.reset();
  const json j = none;
  REQUIRE(j.contains("best"));
  CHECK(j["best"].is_null());
  Made back = made();  // a best of its own, which null must clear
  from_json(j, back);
  CHECK_FALSE(back.best);

  json lacking = j;
  lacking.erase("best");
  CHECK(refusal(lacking) == "--reuse: x.json: best is missing");
}

TEST_CASE("json fields: a missing field is refused naming its whole path", "[json_fields]") {
  for (const char* key : {"date", "steps", "loss", "points", "noise", "recipe"}) {
    json j = json::parse(kMadeText);
    j.erase(key);
    CHECK(refusal(j) == std::string("--reuse: x.json: ") + key + " is missing");
  }
  json j = json::parse(kMadeText);
  j["points"][1].erase("x");
  CHECK(refusal(j) == "--reuse: x.json: points[1].x is missing");
  j = json::parse(kMadeText);
  j["best"].erase("name");
  CHECK(refusal(j) == "--reuse: x.json: best.name is missing");
}

TEST_CASE("json fields: a field of another kind is refused naming it and both kinds", "[json_fields]") {
  json j = json::parse(kMadeText);
  j["steps"] = "7";
  CHECK(refusal(j) == "--reuse: x.json: steps is a string, not an integer");
  j = json::parse(kMadeText);
  j["kept"] = 1;  // optional, but when there of its kind
  CHECK(refusal(j) == "--reuse: x.json: kept is an integer, not true or false");
  j = json::parse(kMadeText);
  j["recipe"] = json::array();
  CHECK(refusal(j) == "--reuse: x.json: recipe is an array, not an object");
  j = json::parse(kMadeText);
  j["noise"]["0.1"] = "x";
  CHECK(refusal(j) == "--reuse: x.json: noise.0.1 is a string, not a number or null");
  j = json::parse(kMadeText);
  j["points"][0] = 3;
  CHECK(refusal(j) == "--reuse: x.json: points[0] is an integer, not an object");
}

TEST_CASE("json fields: an integer its field cannot hold is refused, not wrapped or cut", "[json_fields]") {
  const auto refused = [](const json& v, auto value) -> std::string {
    try {
      nl::fields::read(v, value);
    } catch (const nl::FieldError& e) {
      return e.problem;
    }
    return "accepted";
  };
  CHECK(refused(json(-1), uint64_t{0}) == "is -1, outside 0 to 18446744073709551615");  // before: 2^64 - 1
  CHECK(refused(json(3000000000LL), int{0}) == "is 3000000000, outside -2147483648 to 2147483647");
  CHECK(refused(json(-3000000000LL), int{0}) == "is -3000000000, outside -2147483648 to 2147483647");
  CHECK(refused(json::parse("9223372036854775808"), int64_t{0}) ==
        "is 9223372036854775808, outside -9223372036854775808 to 9223372036854775807");
  // what each type holds is read back exactly, from text (unsigned) and from code (signed)
  uint64_t seed = 0;
  nl::fields::read(json::parse("18446744073709551615"), seed);
  CHECK(seed == UINT64_MAX);
  nl::fields::read(json(int64_t{42}), seed);
  CHECK(seed == 42);
  int count = 0;
  nl::fields::read(json(-2147483648LL), count);
  CHECK(count == INT_MIN);
  int64_t steps = 0;
  nl::fields::read(json::parse("-9223372036854775808"), steps);
  CHECK(steps == INT64_MIN);
}

TEST_CASE("json fields: an optional field required by a field read before it must be there", "[json_fields]") {
  json j = json::parse(kMadeText);
  j["steps"] = 5;
  CHECK(refusal(j) == "--reuse: x.json: gpt_only is missing");
  j["gpt_only"] = 0.25;
  CHECK(read_record<Made>(j, "", "x.json").gpt_only == 0.25);
}
