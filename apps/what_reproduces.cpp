// what_reproduces: the table of the papers' claims as the regime pages judge them
// (studies/reproduces/reproduces.h).
//   build/release/what_reproduces          # docs/results/reproduces.md from regime_full and regime_verma
#include "studies/reproduces/reproduces.h"
#include "train/flags/program.h"

int main(int argc, char** argv) {
  return nl::run_program("what_reproduces",
                         [&] { return nl::what_reproduces_main(std::vector<std::string>(argv + 1, argv + argc)); });
}
