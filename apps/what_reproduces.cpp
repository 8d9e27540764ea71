// what_reproduces: the table of the three papers' claims as their studies judge them
// (studies/reproduces/reproduces.h).
//   build/release/what_reproduces          # docs/results/reproduces.md from the default pages' results
#include "studies/reproduces/reproduces.h"
#include "train/flags/program.h"

int main(int argc, char** argv) {
  return nl::run_program("what_reproduces",
                         [&] { return nl::what_reproduces_main(std::vector<std::string>(argv + 1, argv + argc)); });
}
