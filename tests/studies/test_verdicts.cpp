// Tests of the verdict functions the reports' sentences come from
// (studies/report/verdicts.h), on inputs with known answers.
#include <catch2/catch.hpp>

#include <cmath>

#include "studies/report/verdicts.h"

using namespace nl;

TEST_CASE("verdicts: run status against fixed and LayerNorm-relative bars", "[verdicts]") {
  CHECK(run_status(false, 2.4) == "ok");
  CHECK(run_status(false, 3.25) == "stuck near unigram loss");
  CHECK(run_status(true, 2.4) == "DIVERGED (NaN/inf)");
  CHECK(run_status(false, NAN) == "DIVERGED (NaN/inf)");
  // ln at 2.4, unigram 3.3: the gap is 0.9
  CHECK(status_against_ln(false, 2.41, 2.4, 3.3) == "ok");               // 0.4 % behind
  CHECK(status_against_ln(false, 2.64, 2.4, 3.3) == "behind ln by 10.0 %");
  CHECK(status_against_ln(false, 3.25, 2.4, 3.3) == "stuck near unigram loss");  // closed 0.05 of 0.9
  CHECK(status_against_ln(false, 3.2, 2.4, 3.3) == "behind ln by 33.3 %");       // closed 0.1 of 0.9
  CHECK(status_against_ln(false, 2.3, 2.4, 3.3) == "ok");                // ahead of ln
  CHECK(status_against_ln(true, 2.3, 2.4, 3.3) == "DIVERGED (NaN/inf)");
  CHECK(status_against_ln(false, 3.25, NAN, 3.3) == "stuck near unigram loss");  // no ln: the fixed bar
}

TEST_CASE("verdicts: the unigram loss of a text is its byte entropy", "[verdicts]") {
  CHECK(unigram_loss({'a', 'a', 'a', 'a'}) == Approx(0.0).margin(1e-12));
  CHECK(unigram_loss({'a', 'b', 'a', 'b'}) == Approx(std::log(2.0)));
  CHECK(unigram_loss({'a', 'b', 'c', 'd'}) == Approx(std::log(4.0)));
  // p = (1/2, 1/4, 1/4): H = 1.5 ln 2
  CHECK(unigram_loss({'a', 'a', 'b', 'c'}) == Approx(1.5 * std::log(2.0)));
  CHECK(std::isnan(unigram_loss({})));
}

TEST_CASE("verdicts: decimals of agreement, percentages, spreads, held", "[verdicts]") {
  CHECK(agreeing_decimals(2.406666, 2.406666) == 8);
  CHECK(agreeing_decimals(2.4066, 2.4067) == 3);
  CHECK(agreeing_decimals(2.41, 2.39) == 1);
  CHECK(agreeing_decimals(2.0, 3.0) == -1);
  CHECK(percent_above(2.2, 2.0) == Approx(10.0));
  CHECK(percent_above(1.8, 2.0) == Approx(-10.0));
  const Spread s = spread_of({1.0, 2.0, 6.0});
  CHECK(s.mean == Approx(3.0));
  CHECK(s.min == 1.0);
  CHECK(s.max == 6.0);
  CHECK(s.n == 3);
  CHECK(std::isnan(spread_of({}).mean));
  CHECK(held(true) == "**held**");
  CHECK(held(false) == "**did not hold**");
}
